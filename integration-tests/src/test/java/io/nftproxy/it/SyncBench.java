package io.nftproxy.it;

import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.netlink.nft.LibNftablesClient;
import io.nftproxy.diff.Differ;
import io.nftproxy.nft.TableContent;
import io.nftproxy.readback.KernelTableParser;
import io.nftproxy.net.IpFamily;
import io.nftproxy.render.Renderer;
import io.nftproxy.sync.SyncLevel;
import io.nftproxy.sync.SyncResult;
import io.nftproxy.sync.KernelTable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Sync latency at scale against the real kernel (in-process libnftables, throwaway namespace): cold full sync,
 * restart adoption, and single-change partial syncs. Not part of verify (minutes, and heavy on a shared machine):
 * Its name matches none of surefire's default patterns, so {@code verify} never runs it; run it with
 * {@code ./mvnw -B verify -pl integration-tests -am -Dtest=SyncBench -Dsurefire.failIfNoSpecifiedTests=false
 * -Dsync.bench=1000,10000}. Prints numbers; asserts only correctness.
 */
class SyncBench {
    private static final int ENDPOINTS = 10;
    private static final int SINGLE_CHANGES = 20;

    @Test
    void syncLatency() throws Exception {
        String sizes = System.getProperty("sync.bench");
        Assumptions.assumeTrue(sizes != null, "set -Dsync.bench=1000,10000 to run");
        KernelTests.assumeAvailable();
        for (String n : sizes.split(",")) bench(Integer.parseInt(n.strip()));
    }

    private static void bench(int services) throws Exception {
        List<ServiceObject> svcs = new ArrayList<>();
        List<EndpointSliceObject> slices = new ArrayList<>();
        for (int i = 0; i < services; i++) {
            svcs.add(service(i));
            slices.add(slice(i, 0));
        }
        long t0 = System.nanoTime();
        TableContent desired = render(new ClusterSnapshot(svcs, slices, List.of(), List.of()));
        double renderMs = ms(t0);
        try (KernelNamespace ns = KernelNamespace.create("bench");
             LibNftablesClient client = LibNftablesClient.inNamespace(ns.handle())) {
            client.capabilities();
            Instant now = Instant.parse("2025-01-01T00:00:00Z");
            SyncResult cold = new KernelTable(IpFamily.IPV4, client).converge(desired, now);
            assertTrue(cold.success(), cold::toString);

            long l0 = System.nanoTime();
            String json = client.listTableJson(IpFamily.IPV4);
            double listMs = ms(l0);
            long p0 = System.nanoTime();
            TableContent kernel = KernelTableParser.parse(json);
            double parseMs = ms(p0);
            long d0 = System.nanoTime();
            Differ.diff(kernel, desired);
            double fullDiffMs = ms(d0);
            System.out.printf("bench %,d: read-back breakdown: nft -j list %.0f ms (%,d chars), parse %.0f ms, diff %.0f ms%n",
                    services, listMs, json.length(), parseMs, fullDiffMs);

            KernelTable restarted = new KernelTable(IpFamily.IPV4, client);
            SyncResult adopt = restarted.converge(desired, now);
            assertTrue(adopt.success(), adopt::toString);
            assertEquals(0, adopt.commands(), "adoption rewrote objects");

            // Single changes: one service's endpoints replaced (one endpoint moves), rendered and synced each time.
            double[] syncMs = new double[SINGLE_CHANGES];
            double[] renderOneMs = new double[SINGLE_CHANGES];
            int commands = 0;
            for (int k = 0; k < SINGLE_CHANGES; k++) {
                int victim = (k * 7919) % services;
                slices.set(victim, slice(victim, k + 1));
                long r0 = System.nanoTime();
                TableContent next = render(new ClusterSnapshot(svcs, slices, List.of(), List.of()));
                renderOneMs[k] = ms(r0);
                now = now.plusMillis(100);
                if (k == SINGLE_CHANGES - 1) {
                    long x0 = System.nanoTime();
                    var d = Differ.diff(desired, next);
                    double diffMs = ms(x0);
                    long y0 = System.nanoTime();
                    String script = d.transaction().script(client.capabilities());
                    System.out.printf("bench %,d: single-change breakdown: diff %.1f ms, script %.2f ms:%n%s", services, diffMs, ms(y0), script);
                }
                SyncResult r = restarted.commit(Differ.diff(desired, next), SyncLevel.PARTIAL, now);
                assertTrue(r.success() && r.level() != SyncLevel.CONVERGE, r::toString);
                syncMs[k] = r.duration().toNanos() / 1e6;
                commands += r.commands();
                desired = next;
            }
            Arrays.sort(syncMs);
            Arrays.sort(renderOneMs);
            System.out.printf("bench %,d services x %d endpoints: %s; render %.0f ms; cold full sync %,d commands %.0f ms; "
                            + "restart adoption (read back + diff, %d commands) %.0f ms; single change: sync median %.1f ms, "
                            + "max %.1f ms (%.1f commands avg), render median %.0f ms%n",
                    services, ENDPOINTS, desired, renderMs, cold.commands(), cold.duration().toNanos() / 1e6,
                    adopt.commands(), adopt.duration().toNanos() / 1e6, syncMs[SINGLE_CHANGES / 2], syncMs[SINGLE_CHANGES - 1],
                    commands / (double) SINGLE_CHANGES, renderOneMs[SINGLE_CHANGES / 2]);
        }
    }

    private static TableContent render(ClusterSnapshot s) {
        return Renderer.upstream().render(s, TestClusters.node()).table(IpFamily.IPV4);
    }

    private static ServiceObject service(int i) {
        return TestClusters.svc("bench", "s" + i).clusterIP("172.30." + (i / 250) + "." + (i % 250 + 1))
                .port("http", "TCP", 80).build();
    }

    /** Ten ready endpoints; {@code generation} moves one of them, as a rolling update does. */
    private static EndpointSliceObject slice(int i, int generation) {
        TestClusters.Slice sl = TestClusters.slice("bench", "s" + i, "s" + i + "-a").port("http", "TCP", 8080);
        for (int e = 0; e < ENDPOINTS; e++) {
            int host = i * ENDPOINTS + e + (e == 0 ? generation * 7 : 0);
            sl.ready("10." + (64 + (host >> 16) % 64) + "." + ((host >> 8) & 255) + "." + (host & 255), TestClusters.NODE);
        }
        return sl.build();
    }

    private static double ms(long startNanos) { return (System.nanoTime() - startNanos) / 1e6; }
}
