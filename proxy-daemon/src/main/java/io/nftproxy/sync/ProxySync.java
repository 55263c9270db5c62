package io.nftproxy.sync;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.proxy.Diagnostic;
import io.nftproxy.proxy.IpFamily;
import io.nftproxy.proxy.NodeContext;
import io.nftproxy.render.Renderer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One sync of the whole proxy: render both families' tables from a cluster snapshot and the node, then hand each
 * to its {@link TableSyncer}. A changed node (addresses, topology) makes both syncs full. Owned by one thread.
 *
 * <p>Diagnostics (objects skipped as invalid) are logged once per object and reason: a sync every second must not
 * repeat the same warning every second. An object is logged again when its reason changes, or when it was fixed
 * and breaks again.
 */
public final class ProxySync {
    private static final Logger log = LoggerFactory.getLogger(ProxySync.class);

    /** Both families' results, the diagnostics of this render, and those of them logged now (new or changed). */
    public record Result(Map<IpFamily, SyncResult> families, List<Diagnostic> diagnostics, List<Diagnostic> logged,
                         Renderer.Rendering rendering) {
        public boolean success() { return families.values().stream().allMatch(SyncResult::success); }
    }

    private final Renderer renderer;
    private final Map<IpFamily, TableSyncer> syncers = new EnumMap<>(IpFamily.class);
    /** kind/object/field of each diagnostic logged, with the reason logged. */
    private final Map<String, String> logged = new HashMap<>();
    private NodeContext lastNode;

    public ProxySync(NftClient client) { this(client, Renderer.upstream(), TableSyncer.DEFAULT_FULL_SYNC_INTERVAL); }

    public ProxySync(NftClient client, Renderer renderer, Duration fullSyncInterval) {
        this.renderer = renderer;
        for (IpFamily f : IpFamily.values()) syncers.put(f, new TableSyncer(f, client, fullSyncInterval));
    }

    public TableSyncer syncer(IpFamily f) { return syncers.get(f); }

    /** Both next syncs read the kernel back: for tampering reported by the monitor, say. */
    public void forceFullSync() { syncers.values().forEach(TableSyncer::forceFullSync); }

    public Result sync(ClusterSnapshot snapshot, NodeContext node, Instant now) {
        if (lastNode != null && !lastNode.equals(node)) {
            log.info("node context changed; full sync of both tables");
            forceFullSync();
        }
        Renderer.Rendering rendering = renderer.render(snapshot, node);
        List<Diagnostic> fresh = logNewDiagnostics(rendering.diagnostics());
        Map<IpFamily, SyncResult> results = new EnumMap<>(IpFamily.class);
        for (IpFamily f : IpFamily.values()) results.put(f, syncers.get(f).sync(rendering.table(f), now));
        lastNode = node;
        return new Result(results, rendering.diagnostics(), fresh, rendering);
    }

    private List<Diagnostic> logNewDiagnostics(List<Diagnostic> diags) {
        Set<String> present = new HashSet<>();
        List<Diagnostic> fresh = new ArrayList<>();
        for (Diagnostic d : diags) {
            String key = d.kind() + "\u0000" + d.object() + "\u0000" + d.field();
            present.add(key);
            boolean seen = logged.containsKey(key);
            String before = logged.put(key, d.reason());
            if (!seen || !java.util.Objects.equals(before, d.reason())) fresh.add(d);
        }
        // Forget fixed objects, so that breaking again is logged again.
        logged.keySet().retainAll(present);
        for (Diagnostic d : fresh) log.warn("{}", d);
        return fresh;
    }
}
