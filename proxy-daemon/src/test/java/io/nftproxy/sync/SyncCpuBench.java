package io.nftproxy.sync;

import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.diff.Differ;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;
import io.nftproxy.render.Renderer;
import io.nftproxy.source.ClusterStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The daemon's CPU per cluster change, render and diff without the kernel, before and after the incremental path,
 * at N services × 10 endpoints. Prints, asserts nothing. Its name matches none of surefire's default patterns, so
 * {@code verify} never runs it:
 * {@code ./mvnw -B -o test -pl nft-renderer,conntrack,proxy-daemon -Dtest=SyncCpuBench -Dsurefire.failIfNoSpecifiedTests=false -Dbench.sizes=1000,10000,50000}
 *
 * <p>"Before" is what ProxySync did per change until now: {@code ClusterStore.snapshot()}, {@code Renderer.render}
 * of everything, and {@code Differ.diff(committed, desired)} per family. "After" is {@link ProxySync.Result#coreTime}
 * of a partial sync through {@link ClusterStore}'s change tracking, with a client that drops transactions (the
 * kernel's part is measured by ApplyLatency, docs/benchmarks.md).
 */
class SyncCpuBench {
    private static final int ENDPOINTS = 10;

    /** Accepts every transaction and holds nothing: the kernel's cost is not what is measured here. */
    private static final class NullClient implements NftClient {
        @Override public void apply(Transaction tx) { }
        @Override public String listTableJson(IpFamily family) { return null; }
        @Override public Capabilities capabilities() { return Capabilities.baseline(); }
        @Override public String describe() { return "null"; }
    }

    private int nextIp;

    private ServiceObject service(int i) {
        int a = i + 1;
        return TestClusters.svc("bench-" + (i % 50), "svc-" + i)
                .clusterIP("172." + (16 + (a >> 16)) + "." + ((a >> 8) & 255) + "." + (a & 255)).port("http", "TCP", 80).build();
    }

    private EndpointSliceObject slice(int i) {
        TestClusters.Slice s = TestClusters.slice("bench-" + (i % 50), "svc-" + i, "svc-" + i + "-a").port("http", "TCP", 8080);
        for (int e = 0; e < ENDPOINTS; e++) {
            int a = ++nextIp;
            s.ready("10." + (a >> 16) + "." + ((a >> 8) & 255) + "." + (a & 255), TestClusters.OTHER_NODE);
        }
        return s.build();
    }

    @Test
    void perChangeCpu() {
        String sizes = System.getProperty("bench.sizes", "1000,10000");
        for (String n : sizes.split(",")) run(Integer.parseInt(n.strip()));
    }

    private void run(int services) {
        NodeContext node = TestClusters.node();
        Renderer renderer = new Renderer(io.nftproxy.render.TableLayout.DEFAULT);
        ClusterStore store = new ClusterStore();
        for (int i = 0; i < services; i++) {
            store.upsertService(service(i));
            store.upsertEndpointSlice(slice(i));
        }
        Instant now = Instant.parse("2025-01-01T00:00:00Z");
        ProxySync sync = new ProxySync(new NullClient(), null, renderer, Duration.ofHours(24), Map.of());
        long t = System.nanoTime();
        ProxySync.Result first = sync.sync(store, store.drainChanges(), node, now);
        System.out.printf("%,d services x %d: first (everything) sync core %,d ms%n", services, ENDPOINTS,
                first.coreTime().toMillis());

        // Before: the whole path, per change.
        Map<IpFamily, TableContent> committed = new EnumMap<>(IpFamily.class);
        Renderer.Rendering r0 = renderer.render(store.snapshot(), node);
        for (IpFamily f : IpFamily.values()) committed.put(f, r0.table(f));
        int beforeChanges = services >= 50_000 ? 6 : services >= 10_000 ? 12 : 40;
        List<Long> before = new ArrayList<>();
        int added = services;
        for (int c = 0; c < beforeChanges; c++) {
            change(store, c, added);
            if (c % 2 == 0) added++;
            store.drainChanges();
            long t0 = System.nanoTime();
            ClusterSnapshot snap = store.snapshot();
            Renderer.Rendering r = renderer.render(snap, node);
            for (IpFamily f : IpFamily.values()) {
                Differ.diff(committed.get(f), r.table(f));
                committed.put(f, r.table(f));
            }
            before.add(System.nanoTime() - t0);
        }
        // The old-path changes above went into the store only: one sync of them re-aligns the incremental state.
        sync.sync(store, store.drainChanges(), node, now = now.plusSeconds(2));

        // After: partial syncs.
        List<Long> after = new ArrayList<>();
        for (int c = 0; c < 400; c++) {
            change(store, c, added);
            if (c % 2 == 0) added++;
            ProxySync.Result r = sync.sync(store, store.drainChanges(), node, now = now.plusSeconds(2));
            if (r.level().wholeCluster()) throw new IllegalStateException("change " + c + " synced everything");
            if (c >= 100) after.add(r.coreTime().toNanos());
        }
        System.out.printf("%,d services x %d: before (snapshot + render + diff) %s; after (partial sync core) %s%n",
                services, ENDPOINTS, stats(before, false), stats(after, true));
        System.out.printf("  (setup %,d ms)%n", (System.nanoTime() - t) / 1_000_000);
    }

    /** Even changes add a Service with its slice, odd ones move one endpoint of an existing Service. */
    private void change(ClusterStore store, int c, int added) {
        if (c % 2 == 0) {
            store.upsertService(service(added));
            store.upsertEndpointSlice(slice(added));
        } else {
            store.upsertEndpointSlice(slice((c * 7919) % added));
        }
    }

    private static String stats(List<Long> nanos, boolean p99) {
        long[] a = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
        double p50 = a[a.length / 2] / 1e6;
        double max = a[a.length - 1] / 1e6;
        String s = String.format("p50 %.2f ms", p50);
        if (p99) s += String.format(", p99 %.2f ms", a[(int) Math.ceil(a.length * 0.99) - 1] / 1e6);
        return s + String.format(", max %.2f ms (n=%d)", max, a.length) + (p99 ? "" : " " + Arrays.toString(Arrays.stream(a).map(x -> x / 1_000_000).toArray()));
    }
}
