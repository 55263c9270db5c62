package io.nftproxy.sync;

import io.nftproxy.RandomClusters;
import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.diff.Differ;
import io.nftproxy.netlink.nft.FakeNftClient;
import io.nftproxy.nft.TableContent;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ProxyStateBuilder;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import io.nftproxy.source.ClusterStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The incremental path against the whole one: a random walk of cluster states goes through {@link ClusterStore}'s
 * change tracking and {@link ProxySync}'s partial syncs into the fake kernel, and after every step the fake's table
 * must be the full render of the same snapshot (plus the flushed chains still waiting for their delete).
 */
class IncrementalProxySyncTest {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final int STEPS = 150;

    /** The walk's outcome: divergences, and how many syncs of each kind ran. */
    private record Walk(List<String> divergences, int partial, int everything, int failed) {}

    private static Walk walk(long seed, TableLayout layout, double failureRate) {
        RandomClusters cluster = new RandomClusters(seed);
        FakeNftClient fake = new FakeNftClient();
        if (failureRate > 0) fake.failWhen(FakeNftClient.randomly(seed, failureRate));
        Renderer renderer = new Renderer(layout);
        ProxySync sync = new ProxySync(fake, null, renderer, Duration.ofHours(1), Map.of());
        ClusterStore store = new ClusterStore();
        NodeContext node = TestClusters.node();
        List<String> divergences = new ArrayList<>();
        int partial = 0, everything = 0, failed = 0;
        Instant now = T0;
        for (int i = 0; i < STEPS; i++) {
            String step = i == 0 ? "start" : cluster.step();
            if (i == STEPS / 3) node = node.withLocalAddresses(List.of(IpAddress.parse("192.168.10.20"), IpAddress.parse("192.168.10.21")));
            if (i == STEPS / 2) {
                // Someone else's change, which the monitor would report.
                fake.flushChain(IpFamily.IPV4, "services");
                sync.requestConverge();
            }
            if (i == 2 * STEPS / 3) now = now.plus(Duration.ofHours(2));
            store.replaceAll(cluster.snapshot());
            now = now.plusMillis(700);
            ProxySync.Result r = sync.sync(store, store.drainChanges(), node, now);
            String where = "seed " + seed + " " + layout + " step " + i + " (" + step + ")";
            if (!r.success()) {
                failed++;
                continue;
            }
            if (r.level().wholeCluster()) everything++;
            else partial++;
            ClusterSnapshot snapshot = store.snapshot();
            Renderer.Rendering full = renderer.render(snapshot, node);
            for (IpFamily f : IpFamily.values()) {
                TableContent want = Differ.committed(full.table(f), sync.kernel(f).staleChains());
                TableContent have = fake.dump(f);
                if (!want.equals(have)) divergences.add(where + " " + f + ": kernel differs from the full render");
                ProxyState whole = ProxyStateBuilder.build(snapshot, f, node.nodeName());
                ProxyState kept = r.state(f);
                if (!whole.servicePorts().equals(kept.servicePorts()) || !whole.endpoints().equals(kept.endpoints())) {
                    divergences.add(where + " " + f + ": kept state differs from ProxyStateBuilder.build");
                }
                if (full.tables().get(f).noLocalInternal() != r.noLocalInternal(f)
                        || full.tables().get(f).noLocalExternal() != r.noLocalExternal(f)) {
                    divergences.add(where + " " + f + ": no-local counters differ");
                }
            }
            if (!new java.util.HashSet<>(full.diagnostics()).equals(new java.util.HashSet<>(r.diagnostics()))) {
                divergences.add(where + ": diagnostics differ");
            }
        }
        return new Walk(divergences, partial, everything, failed);
    }

    @Test
    void randomWalksMatchTheFullRenderAfterEveryStep() {
        for (TableLayout layout : TableLayout.values()) {
            for (long seed = 1; seed <= 3; seed++) {
                Walk w = walk(seed, layout, 0);
                long s = seed;
                assertEquals(List.of(), w.divergences(), () -> "seed " + s + " " + layout + ": " + w.divergences().size() + " divergences");
                // Start, node change, tamper, timer: a handful of whole syncs, the rest partial.
                assertTrue(w.partial() >= STEPS - 10, () -> "seed " + s + ": only " + w.partial() + " partial syncs");
            }
        }
    }

    @Test
    void randomWalksWithFailingTransactionsConvergeAfterEverySuccess() {
        for (long seed = 11; seed <= 13; seed++) {
            Walk w = walk(seed, TableLayout.DEFAULT, 0.1);
            long s = seed;
            assertEquals(List.of(), w.divergences(), () -> "seed " + s + ": " + w.divergences().size() + " divergences");
            assertTrue(w.failed() > 0, () -> "seed " + s + ": no failure injected, the test proves nothing");
            assertTrue(w.partial() > STEPS / 2, () -> "seed " + s + ": only " + w.partial() + " partial syncs");
        }
    }
}
