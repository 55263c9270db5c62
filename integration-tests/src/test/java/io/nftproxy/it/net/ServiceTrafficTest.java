package io.nftproxy.it.net;

import io.nftproxy.netlink.KernelTests;
import io.nftproxy.demo.EchoServer;
import io.nftproxy.demo.Probe;
import io.nftproxy.demo.Topology;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.util.Optional;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static io.nftproxy.TestAddresses.*;
import static io.nftproxy.it.net.TestNetworks.*;
import static io.nftproxy.it.net.TrafficServices.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real TCP and UDP through the rendered table, loaded into the node of a {@link Topology}: every assertion is about
 * what a client and a backend observed (which backend answered, which source address it saw, a refusal or
 * silence), never about the rule text. Every check runs against every table layout, each in its own topology.
 */
class ServiceTrafficTest {
    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class UpstreamLayout extends Checks {
        UpstreamLayout() { super(TableLayout.UPSTREAM); }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class FastLayout extends Checks {
        FastLayout() { super(TableLayout.FAST); }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class FlatLayout extends Checks {
        FlatLayout() { super(TableLayout.FLAT); }
    }

    /**
     * A chi-square bound for the spread over equally likely backends: with 2 degrees of freedom (3 backends)
     * P(chi2 > 16) = e^-8, about 3 in 10,000 runs of a correct table. At 180 connections it catches gross bias (a
     * backend never or rarely picked; 1/2, 1/4, 1/4 most of the time); the exact odds of each layout's rules are
     * pinned by the tracer tests, so this bound stays loose enough not to flake on a loaded machine.
     */
    static final double CHI_SQUARE_BOUND = 16;
    static final int SPREAD_CONNECTIONS = 180;

    abstract static class Checks {
        /** A REJECT comes back as an ICMP error within a millisecond or so; a DROP never comes back. */
        private static final double FAST_REFUSAL_MILLIS = 100;
        /** How long an expected DROP is waited for: short, since a passing test waits all of it. */
        private static final int DROP_WAIT_MILLIS = 1_000;
        /** Past TCP's first SYN retransmission (1 s). */
        private static final int IPV6_REFUSAL_TIMEOUT_MILLIS = 2_500;

        private final TableLayout layout;

        private Topology topology;
        private final List<EchoServer> servers = new ArrayList<>();

        Checks(TableLayout layout) { this.layout = layout; }

        @BeforeAll
        void buildTopology() throws Exception {
            KernelTests.assumeAvailableAnd(Optional.ofNullable(Topology.unavailabilityCause()));
            long start = System.nanoTime();
            topology = Topology.build(TestNetworks.plan());
            for (Topology.Host b : topology.backends()) {
                servers.add(EchoServer.start(b.thread(), b.role(), BACKEND_TCP_PORT, BACKEND_UDP_PORT));
            }
            Renderer.Rendering r = new Renderer(layout).render(TrafficServices.snapshot(), TestNetworks.nodeContext());
            assertTrue(r.diagnostics().isEmpty(), () -> "the traffic services are invalid: " + r.diagnostics());
            topology.program(r);
            System.out.printf("traffic topology (%s layout) built and programmed in %d ms%n", layout.cliName(),
                    (System.nanoTime() - start) / 1_000_000);
        }

        @AfterAll
        void tearDown() throws Exception {
            try {
                for (EchoServer s : servers) s.close();
            } finally {
                servers.clear();
                if (topology != null) topology.close();
                topology = null;
            }
        }

        @Test
        void clusterIpFromAPodSpreadsOverLocalAndRemoteBackendsAndKeepsThePodIp() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.podClient()).tcp(WEB, HTTP, 60);
            report("ClusterIP from pod", out);
            assertAllReplied(out);
            assertEquals(Set.of("pod-a", "pod-b", "remote-pod"), backends(out), "every backend, local and remote");
            assertEquals(Set.of(POD_CLIENT), peers(out), "backends see the pod's own address: no masquerade");
        }

        /**
         * Each new connection picks a backend with probability 1/3: every backend answers, and the counts stay within
         * a chi-square bound of the uniform spread.
         */
        @Test
        void clusterIpSpreadIsRoughlyUniform() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.podClient()).tcp(WEB, HTTP, SPREAD_CONNECTIONS);
            report("ClusterIP spread from pod", out);
            assertAllReplied(out);
            assertEquals(SPREAD_CONNECTIONS, out.size());
            Map<String, Integer> spread = Probe.spread(out);
            assertEquals(Set.of("pod-a", "pod-b", "remote-pod"), spread.keySet(), "every backend");
            double expected = SPREAD_CONNECTIONS / 3.0;
            double chi2 = spread.values().stream().mapToDouble(n -> (n - expected) * (n - expected) / expected).sum();
            System.out.printf("traffic %s layout: spread %s, chi2 %.2f (bound %.0f)%n", layout.cliName(), spread, chi2, CHI_SQUARE_BOUND);
            assertTrue(chi2 < CHI_SQUARE_BOUND, () -> "spread " + spread + " is not uniform: chi2 " + chi2);
        }

        @Test
        void clusterIpFromTheNodeIsMasqueraded() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.node()).tcp(WEB, HTTP, 30);
            report("ClusterIP from node", out);
            assertAllReplied(out);
            assertEquals(Set.of("pod-a", "pod-b", "remote-pod"), backends(out));
            // The host picks 192.168.10.20 from its default route; only masquerading rewrites it, for a local backend,
            // to the node's address on that backend's veth.
            for (Probe.Outcome o : out) assertEquals(nodeAddressTowards(o.backend()), o.peer(), o::toString);
        }

        @Test
        void nodePortFromOutsideReachesEveryBackendMasqueraded() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.external()).tcp(NODE_IP, WEB_NODE_PORT, 30);
            report("NodePort eTP=Cluster from external", out);
            assertAllReplied(out);
            assertEquals(Set.of("pod-a", "pod-b", "remote-pod"), backends(out));
            for (Probe.Outcome o : out) assertEquals(nodeAddressTowards(o.backend()), o.peer(), o::toString);
        }

        @Test
        void externalIpAndLoadBalancerVipFromOutsideReachTheBackends() throws Exception {
            Probe external = Probe.from(topology.external());
            List<Probe.Outcome> viaExternalIp = external.tcp(EXTERNAL_IP, HTTP, 20);
            List<Probe.Outcome> viaVip = external.boundTo(EXTERNAL_CLIENT).tcp(LB_VIP, HTTP, 20);
            report("externalIP from external", viaExternalIp);
            report("LB VIP from external (allowed source)", viaVip);
            for (List<Probe.Outcome> out : List.of(viaExternalIp, viaVip)) {
                assertAllReplied(out);
                assertEquals(Set.of("pod-a", "pod-b", "remote-pod"), backends(out));
                for (Probe.Outcome o : out) assertEquals(nodeAddressTowards(o.backend()), o.peer(), o::toString);
            }
        }

        @Test
        void aServiceWithoutEndpointsIsRefusedAtOnce() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.podClient()).tcp(EMPTY, HTTP, 3);
            report("no endpoints (REJECT)", out);
            assertAllFastRefusals(out);
        }

        @Test
        void internalLocalWithOnlyRemoteEndpointsDrops() throws Exception {
            Probe.Outcome o = Probe.from(topology.podClient()).timeoutMillis(DROP_WAIT_MILLIS).tcp(REMOTE_ONLY, HTTP);
            report("iTP=Local, only remote endpoints (DROP)", List.of(o));
            assertEquals(Probe.Kind.TIMEOUT, o.kind(), o::toString);
        }

        @Test
        void externalLocalNodePortWithoutLocalEndpointsDrops() throws Exception {
            Probe.Outcome o = Probe.from(topology.external()).timeoutMillis(DROP_WAIT_MILLIS).tcp(NODE_IP, REMOTE_ONLY_NODE_PORT);
            report("eTP=Local NodePort, no local endpoints (DROP)", List.of(o));
            assertEquals(Probe.Kind.TIMEOUT, o.kind(), o::toString);
        }

        @Test
        void externalLocalNodePortReachesOnlyLocalBackendsAndKeepsTheClientIp() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.external()).tcp(NODE_IP, WEB_LOCAL_NODE_PORT, 30);
            report("NodePort eTP=Local from external", out);
            assertAllReplied(out);
            assertEquals(Set.of("pod-a", "pod-b"), backends(out), "local backends only, both of them");
            assertEquals(Set.of(EXTERNAL_CLIENT), peers(out), "the client's own address is preserved");
        }

        @Test
        void internalLocalReachesOnlyLocalBackends() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.podClient()).tcp(INTERNAL_LOCAL, HTTP, 30);
            report("ClusterIP iTP=Local from pod", out);
            assertAllReplied(out);
            assertEquals(Set.of("pod-a", "pod-b"), backends(out), "local backends only, both of them");
            assertEquals(Set.of(POD_CLIENT), peers(out));
        }

        @Test
        void aPodReachingItselfThroughItsServiceIsHairpinMasqueraded() throws Exception {
            // Without the hairpin masquerade pod-a would see its own address as the source, answer itself over
            // loopback, and the un-DNATed reply would never match the connection: the connect would fail.
            List<Probe.Outcome> out = Probe.from(topology.host("pod-a")).tcp(HAIRPIN, HTTP, 5);
            report("hairpin pod-a -> own service", out);
            assertAllReplied(out);
            assertEquals(Set.of("pod-a"), backends(out));
            assertEquals(Set.of(NODE_POD_GATEWAY), peers(out), "the node's address on pod-a's veth");
        }

        @Test
        void clientIpAffinityKeepsOneClientOnOneBackend() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.podClient()).tcp(STICKY, HTTP, 20);
            report("ClientIP affinity from pod", out);
            assertAllReplied(out);
            assertEquals(1, backends(out).size(), () -> "20 connections from one client went to " + Probe.spread(out));
        }

        @Test
        void loadBalancerSourceRangesAdmitAllowedSourcesAndDropOthers() throws Exception {
            Probe external = Probe.from(topology.external());
            List<Probe.Outcome> allowed = external.boundTo(EXTERNAL_CLIENT).tcp(LB_VIP, HTTP, 5);
            Probe.Outcome denied = external.boundTo(DENIED_CLIENT).timeoutMillis(DROP_WAIT_MILLIS).tcp(LB_VIP, HTTP);
            report("LB source ranges, allowed " + EXTERNAL_CLIENT, allowed);
            report("LB source ranges, denied " + DENIED_CLIENT, List.of(denied));
            assertAllReplied(allowed);
            assertEquals(Probe.Kind.TIMEOUT, denied.kind(), denied::toString);
        }

        @Test
        void udpThroughAClusterIpReachesEveryBackend() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.podClient()).udp(DNS_SVC, DNS, 30);
            report("UDP ClusterIP from pod", out);
            assertAllReplied(out);
            assertEquals(Set.of("pod-a", "pod-b", "remote-pod"), backends(out));
            assertEquals(Set.of(POD_CLIENT), peers(out));
        }

        @Test
        void aPortTheClusterIpDoesNotServeIsRefusedAtOnce() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.podClient()).tcp(WEB, HTTP + 1, 3);
            report("ClusterIP wrong port (REJECT)", out);
            assertAllFastRefusals(out);
        }

        @Test
        void anUnallocatedServiceAddressIsDroppedWhereOtherUnknownAddressesAreUnreachable() throws Exception {
            Probe pod = Probe.from(topology.podClient());
            // The control: with no rule for it, an unknown address goes to the LAN router, which refuses it at once.
            // So the silence below is the table's DROP, not the topology's.
            Probe.Outcome outsideServiceCidr = pod.tcp("192.0.2.99", HTTP);
            Probe.Outcome unallocated = pod.timeoutMillis(DROP_WAIT_MILLIS).tcp(UNALLOCATED, HTTP);
            report("unknown address outside ServiceCIDR (control)", List.of(outsideServiceCidr));
            report("unallocated ServiceCIDR address (DROP)", List.of(unallocated));
            assertEquals(Probe.Kind.UNREACHABLE, outsideServiceCidr.kind(), outsideServiceCidr::toString);
            assertEquals(Probe.Kind.TIMEOUT, unallocated.kind(), unallocated::toString);
        }

        @Test
        void ipv6ClusterIpFromAPodSpreadsOverEveryBackendAndKeepsThePodIp() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.podClient()).tcp(WEB6, HTTP, 30);
            report("IPv6 ClusterIP from pod", out);
            assertAllReplied(out);
            assertEquals(Set.of("pod-a", "pod-b", "remote-pod"), backends(out));
            assertEquals(Set.of(POD_CLIENT6), peers(out));
        }

        @Test
        void ipv6ClusterIpFromTheNodeIsMasqueraded() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.node()).tcp(WEB6, HTTP, 30);
            report("IPv6 ClusterIP from node", out);
            assertAllReplied(out);
            assertEquals(Set.of("pod-a", "pod-b", "remote-pod"), backends(out));
            for (Probe.Outcome o : out) {
                assertEquals(o.backend().equals("remote-pod") ? NODE_IP6 : NODE_POD_GATEWAY6, o.peer(), o::toString);
            }
        }

        @Test
        void ipv6UdpThroughAClusterIpReachesEveryBackend() throws Exception {
            List<Probe.Outcome> out = Probe.from(topology.podClient()).udp(DNS_SVC6, DNS, 30);
            report("IPv6 UDP ClusterIP from pod", out);
            assertAllReplied(out);
            assertEquals(Set.of("pod-a", "pod-b", "remote-pod"), backends(out));
            assertEquals(Set.of(POD_CLIENT6), peers(out));
        }

        @Test
        void ipv6ServiceWithoutEndpointsIsRefusedNotDropped() throws Exception {
            // Over IPv6 the ICMPv6 error for the first SYN arrives in the same softirq run as the SYN's own
            // transmission, while connect() still holds the socket lock, and TCP discards it (TcpExtLockDroppedIcmps
            // counts it); the retransmitted SYN a second later gets its refusal through. So: refused, after at most one
            // retransmission, where a DROP stays silent for the whole (longer) timeout.
            List<Probe.Outcome> out = Probe.from(topology.podClient()).timeoutMillis(IPV6_REFUSAL_TIMEOUT_MILLIS).tcp(EMPTY6, HTTP, 2);
            report("IPv6 no endpoints (REJECT)", out);
            for (Probe.Outcome o : out) {
                assertEquals(Probe.Kind.REFUSED, o.kind(), o::toString);
                assertTrue(o.millis() < IPV6_REFUSAL_TIMEOUT_MILLIS - 500, () -> "refused only at the timeout: " + o);
            }
        }

        /** The address a masqueraded flow leaves the node with towards {@code backend}: its veth's, or the uplink's. */
        private static String nodeAddressTowards(String backend) {
            return backend.equals("remote-pod") ? NODE_IP : NODE_POD_GATEWAY;
        }

        private static void assertAllReplied(List<Probe.Outcome> out) {
            List<Probe.Outcome> failed = out.stream().filter(o -> !o.replied()).toList();
            assertTrue(failed.isEmpty(), () -> failed.size() + " of " + out.size() + " got no reply, e.g. " + failed.get(0));
        }

        private static void assertAllFastRefusals(List<Probe.Outcome> out) {
            for (Probe.Outcome o : out) {
                assertEquals(Probe.Kind.REFUSED, o.kind(), o::toString);
                assertTrue(o.millis() < FAST_REFUSAL_MILLIS, () -> "refused, but slowly: " + o);
            }
        }

        private static Set<String> backends(List<Probe.Outcome> out) {
            return out.stream().filter(Probe.Outcome::replied).map(Probe.Outcome::backend).collect(Collectors.toCollection(TreeSet::new));
        }

        private static Set<String> peers(List<Probe.Outcome> out) {
            return out.stream().filter(Probe.Outcome::replied).map(Probe.Outcome::peer).collect(Collectors.toCollection(TreeSet::new));
        }

        /** One line per check: outcome counts (the spread over backends), the peers seen, and the timings. */
        private void report(String what, List<Probe.Outcome> out) {
            Map<String, Integer> spread = Probe.spread(out);
            double max = out.stream().mapToDouble(Probe.Outcome::millis).max().orElse(0);
            double avg = out.stream().mapToDouble(Probe.Outcome::millis).average().orElse(0);
            System.out.printf("traffic %-8s %-48s n=%-3d %s peers=%s avg=%.1f ms max=%.1f ms%n",
                    layout.cliName(), what, out.size(), spread, peers(out), avg, max);
        }
    }
}
