package io.nftproxy.it;

import io.nftproxy.netlink.KernelTests;
import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.diff.Differ;
import io.nftproxy.netlink.nft.LibNftablesClient;
import io.nftproxy.nft.TableContent;
import io.nftproxy.readback.KernelTableParser;
import io.nftproxy.readback.Json;
import io.nftproxy.net.IpFamily;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import io.nftproxy.sync.KernelTable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where a restart's read-back of a big table goes: the kernel's listing, JSON parsing, the model parser and the
 * diff, each timed in a fresh JVM (the first round is what a restarting daemon pays) and warmed up. Run with
 * {@code ./mvnw -B verify -pl integration-tests -am -Dtest=ReadBackBench -Dsurefire.failIfNoSpecifiedTests=false
 * -Dreadback.bench=10000} (add {@code -DargLine=-XX:TieredStopAtLevel=1} for the launcher's JIT setting).
 */
class ReadBackBench {
    @Test
    void readBack() throws Exception {
        String size = System.getProperty("readback.bench");
        Assumptions.assumeTrue(size != null, "set -Dreadback.bench=10000 to run");
        KernelTests.assumeAvailable();
        int n = Integer.parseInt(size);
        List<ServiceObject> svcs = new ArrayList<>();
        List<EndpointSliceObject> slices = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            svcs.add(TestClusters.svc("bench", "s" + i).clusterIP("172.30." + (i / 250) + "." + (i % 250 + 1)).port("http", "TCP", 80).build());
            slices.add(TestClusters.slice("bench", "s" + i, "s" + i + "-a").port("http", "TCP", 8080)
                    .ready("10.64." + (i / 125) + "." + (2 * (i % 125) + 1), TestClusters.NODE)
                    .ready("10.64." + (i / 125) + "." + (2 * (i % 125) + 2), TestClusters.NODE).build());
        }
        TableContent desired = new Renderer(TableLayout.DEFAULT).render(new ClusterSnapshot(svcs, slices, List.of(), List.of()), TestClusters.node())
                .table(IpFamily.IPV4);
        try (KernelNamespace ns = KernelNamespace.create("readback");
             LibNftablesClient client = LibNftablesClient.inNamespace(ns.handle())) {
            assertTrue(new KernelTable(IpFamily.IPV4, client).converge(desired, Instant.now()).success());
            try (LibNftablesClient fresh = LibNftablesClient.inNamespace(ns.handle())) {
                long p0 = System.nanoTime();
                fresh.capabilities();
                System.out.printf("readback %,d services: capabilities probe of a fresh client with the table in place %.0f ms%n",
                        n, (System.nanoTime() - p0) / 1e6);
            }
            for (int round = 1; round <= 4; round++) {
                long t0 = System.nanoTime();
                String json = client.listTableJson(IpFamily.IPV4);
                long t1 = System.nanoTime();
                Object tree = Json.parse(json);
                long t2 = System.nanoTime();
                TableContent kernel = KernelTableParser.parse(json);
                long t3 = System.nanoTime();
                Differ.Diff d = Differ.diff(kernel, desired);
                long t4 = System.nanoTime();
                assertTrue(tree != null);
                // Only the chain comments nft's JSON leaves out differ (the adoption step takes care of those).
                assertTrue(d.transaction().size() <= 8, "the read-back is what was written: " + d.transaction().size());
                System.out.printf("readback %,d services round %d: list %.0f ms (%,d chars), json %.0f ms, json+model %.0f ms, diff %.0f ms%n",
                        n, round, (t1 - t0) / 1e6, json.length(), (t2 - t1) / 1e6, (t3 - t2) / 1e6, (t4 - t3) / 1e6);
            }
        }
    }
}
