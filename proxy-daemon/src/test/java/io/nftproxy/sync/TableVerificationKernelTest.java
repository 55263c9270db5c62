package io.nftproxy.sync;

import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.monitor.CommitLedger;
import io.nftproxy.netlink.nft.LibNftablesClient;
import io.nftproxy.netlink.nft.RulesetGeneration;
import io.nftproxy.net.IpFamily;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static io.nftproxy.TestClusters.NODE;
import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The periodic verification in the kernel, in a namespace of its own, with no monitor: a timer sync after nothing
 * happened lists nothing, and every kind of tampering (a changed element, a deleted chain, a foreign rule) makes the
 * next timer sync read the table back and repair it, whatever the monitor would have done.
 */
class TableVerificationKernelTest {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final Duration PERIOD = Duration.ofMinutes(10);

    private static ClusterSnapshot cluster3() {
        TestClusters c = cluster();
        for (int i = 1; i <= 3; i++) {
            c = c.service(svc("a", "s" + i).clusterIP("172.30.0." + i).port("http", "TCP", 80).build())
                    .slice(slice("a", "s" + i, "s" + i + "-1").port("http", "TCP", 8080).ready("10.180.0." + i, NODE).build());
        }
        return c.snapshot();
    }

    /** In the chain layouts tampering hits per-service chains; in the flat one the shared sets and maps. */
    @ParameterizedTest
    @EnumSource(value = TableLayout.class, names = {"FAST", "FLAT"})
    void theTimerListsNothingWhenUnchangedAndCatchesEveryKindOfTampering(TableLayout layout) throws Exception {
        KernelTests.assumeAvailable();
        Renderer renderer = new Renderer(layout);
        ClusterSnapshot snapshot = cluster3();
        List<String> serviceChains = renderer.render(snapshot, TestClusters.node()).table(IpFamily.IPV4).chains().keySet().stream()
                .filter(n -> n.startsWith("service-") && n.contains("/tcp/")).sorted().toList();
        assertEquals(layout.flat() ? 0 : 3, serviceChains.size(), serviceChains.toString());
        try (KernelNamespace ns = KernelNamespace.create("ver");
             LibNftablesClient client = LibNftablesClient.inNamespace(ns.handle());
             RulesetGeneration gen = RulesetGeneration.openIn(ns.handle())) {
            GenerationTracker tracker = new GenerationTracker(client, gen::current, new CommitLedger());
            ProxySync sync = new ProxySync(tracker, tracker::verify, renderer, PERIOD, Map.of());
            Instant[] now = {T0};
            assertTrue(sync.sync(snapshot, TestClusters.node(), now[0]).success());
            String good = ns.listTableText(IpFamily.IPV4);

            ProxySync.Result quiet = timer(sync, snapshot, now);
            assertTrue(quiet.plan().verified(IpFamily.IPV4), quiet.plan().verifications().toString());
            assertEquals(0, quiet.families().get(IpFamily.IPV4).commands());

            List<String> tampering = layout.flat() ? List.of(
                    // an element changed: s1's ClusterIP now leads to s2's endpoint
                    "delete element ip kube-proxy flat-endpoints-tcp-1 { 172.30.0.1 . 80 . 0 }\n"
                            + "add element ip kube-proxy flat-endpoints-tcp-1 { 172.30.0.1 . 80 . 0 : 10.180.0.2 . 8080 }\n",
                    // s3's dispatch element deleted
                    "delete element ip kube-proxy flat-ips-tcp-1 { 172.30.0.3 . 80 }\n",
                    // a rule nftproxy never writes
                    "add rule ip kube-proxy services meta mark set 0x1234\n") : List.of(
                    // an element changed: s1's ClusterIP now leads to s2's chain
                    "delete element ip kube-proxy service-ips { 172.30.0.1 . tcp . 80 }\n"
                            + "add element ip kube-proxy service-ips { 172.30.0.1 . tcp . 80 : goto " + chainOf(serviceChains, "s2") + " }\n",
                    // a chain deleted, with the element that led to it
                    "delete element ip kube-proxy service-ips { 172.30.0.3 . tcp . 80 }\ndelete chain ip kube-proxy " + chainOf(serviceChains, "s3") + "\n",
                    // a rule nftproxy never writes
                    "add rule ip kube-proxy " + chainOf(serviceChains, "s1") + " meta mark set 0x1234\n");
            for (String t : tampering) {
                ns.load(t);
                assertFalse(good.equals(ns.listTableText(IpFamily.IPV4)), "the tampering changed the table: " + t);
                ProxySync.Result r = timer(sync, snapshot, now);
                assertTrue(r.success(), r::toString);
                assertTrue(r.plan().convergesOn(IpFamily.IPV4), t + ": " + r.plan().verifications());
                assertTrue(r.families().get(IpFamily.IPV4).commands() > 0, "repaired: " + t);
                assertEquals(good, ns.listTableText(IpFamily.IPV4), "back to what we meant after: " + t);
                ProxySync.Result after = timer(sync, snapshot, now);
                assertTrue(after.plan().verified(IpFamily.IPV4), "trusted again after the repair: " + after.plan().verifications());
            }

            // Someone else's commit to another table is indistinguishable by generation: read back, nothing to repair.
            ns.load("add table ip nftp-cni\n");
            ProxySync.Result other = timer(sync, snapshot, now);
            assertTrue(other.plan().convergesOn(IpFamily.IPV4));
            assertEquals(0, other.families().get(IpFamily.IPV4).commands());
            assertEquals(good, ns.listTableText(IpFamily.IPV4));
        }
    }

    private static ProxySync.Result timer(ProxySync sync, ClusterSnapshot snapshot, Instant[] now) {
        now[0] = now[0].plus(PERIOD);
        return sync.sync(snapshot, TestClusters.node(), now[0]);
    }

    private static String chainOf(List<String> serviceChains, String service) {
        return serviceChains.stream().filter(c -> c.contains("a/" + service + "/")).findFirst().orElseThrow(() -> new AssertionError(service + " in " + serviceChains));
    }
}
