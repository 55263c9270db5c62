package io.nftproxy.it.diff;

import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.service.ProxyStateBuilder;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.nftproxy.TestAddresses.NODE;
import static io.nftproxy.TestAddresses.NODE_IP;
import static io.nftproxy.TestAddresses.NODE_IP6;
import static io.nftproxy.TestAddresses.OTHER_NODE;
import static io.nftproxy.TestAddresses.OTHER_NODE_IP;
import static io.nftproxy.TestAddresses.POD_CIDR;
import static io.nftproxy.TestAddresses.POD_CIDR6;
import static io.nftproxy.TestAddresses.ZONE;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.slice6;
import static io.nftproxy.TestClusters.svc;

/**
 * Clusters covering every feature the proxy has, for the differential tests: each Service below is there for the
 * feature its name says. Every node port is given (30000-30999, health checks 32000-32099), none left to the API
 * server's random pick, so {@link #atScale}'s 31000-32699 cannot collide with one. Addresses follow the test address plan (TestAddresses): this node is node-a, endpoints on
 * it are in 10.0.1.0/24 (fd00:10::1:0/112), endpoints elsewhere in 10.0.2.0/24 (fd00:10::2:0/112).
 */
final class FeatureCorpus {
    private static final String NS = "features";
    private static final String OTHER_ZONE = "zone-b";

    private FeatureCorpus() {}

    /** The Node objects: this one (both families, pod CIDRs for NodeCIDR detection, a zone) and another. */
    static List<NodeObject> nodes() {
        return List.of(
                new NodeObject(new ObjectMeta(null, NODE, Map.of(NodeObject.ZONE_LABEL, ZONE), Map.of(), false),
                        List.of(new NodeObject.Address("InternalIP", NODE_IP), new NodeObject.Address("InternalIP", NODE_IP6)),
                        List.of(), List.of(POD_CIDR, POD_CIDR6)),
                new NodeObject(new ObjectMeta(null, OTHER_NODE, Map.of(NodeObject.ZONE_LABEL, OTHER_ZONE), Map.of(), false),
                        List.of(new NodeObject.Address("InternalIP", OTHER_NODE_IP)), List.of(), List.of()));
    }

    /** Every feature, IPv4, IPv6 and dual-stack, on the two nodes. */
    static ClusterSnapshot features() {
        TestClusters c = TestClusters.cluster();
        nodes().forEach(c::node);
        // ClusterIP, named target ports resolved by the slice, a local endpoint (hairpin).
        c.service(svc(NS, "web").clusterIP("172.30.0.41").port("http", "TCP", 80).build());
        c.slice(slice(NS, "web", "web-1").port("http", "TCP", 8080)
                .ready("10.0.2.3", OTHER_NODE).ready("10.0.2.10", OTHER_NODE).ready("10.0.1.2", NODE).build());
        // Several named ports, TCP and UDP on one port number (DNS), SCTP.
        c.service(svc(NS, "multi").clusterIP("172.30.0.42").port("http", "TCP", 80).port("https", "TCP", 443).build());
        c.slice(slice(NS, "multi", "multi-1").port("http", "TCP", 8080).port("https", "TCP", 8443)
                .ready("10.0.2.5", OTHER_NODE).ready("10.0.2.6", OTHER_NODE).build());
        c.service(svc(NS, "dns").clusterIP("172.30.0.10").port("dns", "UDP", 53).port("dns-tcp", "TCP", 53).port("metrics", "TCP", 9153).build());
        c.slice(slice(NS, "dns", "dns-1").port("dns", "UDP", 53).port("dns-tcp", "TCP", 53).port("metrics", "TCP", 9153)
                .ready("10.0.2.20", OTHER_NODE).ready("10.0.1.21", NODE).build());
        c.service(svc(NS, "sctp").clusterIP("172.30.0.43").nodePort("assoc", "SCTP", 9999, 30999).nodePort("assoc-np", "SCTP", 9998, 30998).build());
        c.slice(slice(NS, "sctp", "sctp-1").port("assoc", "SCTP", 9999).port("assoc-np", "SCTP", 9998).ready("10.0.2.30", OTHER_NODE).build());
        // NodePort, TCP and UDP.
        c.service(svc(NS, "nodeport").clusterIP("172.30.0.44").nodePort("http", "TCP", 80, 30080).nodePort("syslog", "UDP", 514, 30514).build());
        c.slice(slice(NS, "nodeport", "nodeport-1").port("http", "TCP", 80).port("syslog", "UDP", 514)
                .ready("10.0.2.40", OTHER_NODE).ready("10.0.1.40", NODE).build());
        // LoadBalancer with source ranges; with Local external policy, with and without a local endpoint.
        c.service(svc(NS, "lb").clusterIP("172.30.0.45").loadBalancer("203.0.113.10", "198.51.100.0/25", "192.168.10.0/24")
                .nodePort("http", "TCP", 80, 30081).build());
        c.slice(slice(NS, "lb", "lb-1").port("http", "TCP", 8080).ready("10.0.2.50", OTHER_NODE).ready("10.0.2.51", OTHER_NODE).build());
        c.service(svc(NS, "lb-local").clusterIP("172.30.0.46").loadBalancer("203.0.113.11").externalLocal()
                .nodePort("http", "TCP", 80, 30082).healthCheckNodePort(32000).build());
        c.slice(slice(NS, "lb-local", "lb-local-1").port("http", "TCP", 8080).ready("10.0.2.60", OTHER_NODE).ready("10.0.1.60", NODE).build());
        c.service(svc(NS, "lb-local-remote").clusterIP("172.30.0.47").loadBalancer("203.0.113.12").externalLocal()
                .nodePort("http", "TCP", 80, 30083).healthCheckNodePort(32001).build());
        c.slice(slice(NS, "lb-local-remote", "lb-local-remote-1").port("http", "TCP", 8080).ready("10.0.2.61", OTHER_NODE).build());
        // externalIPs; ClientIP affinity, on a NodePort too.
        c.service(svc(NS, "external-ip").clusterIP("172.30.0.48").port("http", "TCP", 80).externalIP("192.0.2.10").externalIP("192.0.2.11").build());
        c.slice(slice(NS, "external-ip", "external-ip-1").port("http", "TCP", 80).ready("10.0.2.70", OTHER_NODE).build());
        c.service(svc(NS, "sticky").clusterIP("172.30.0.49").clientIPAffinity(300).nodePort("http", "TCP", 80, 30084).build());
        c.slice(slice(NS, "sticky", "sticky-1").port("http", "TCP", 80).ready("10.0.2.80", OTHER_NODE).ready("10.0.2.81", OTHER_NODE).build());
        c.service(svc(NS, "sticky-default").clusterIP("172.30.0.50").clientIPAffinity(null).port("http", "TCP", 80).build());
        c.slice(slice(NS, "sticky-default", "sticky-default-1").port("http", "TCP", 80).ready("10.0.2.82", OTHER_NODE).build());
        // Internal Local policy, with and without a local endpoint.
        c.service(svc(NS, "itp-local").clusterIP("172.30.0.51").internalLocal().port("http", "TCP", 80).build());
        c.slice(slice(NS, "itp-local", "itp-local-1").port("http", "TCP", 80).ready("10.0.2.90", OTHER_NODE).ready("10.0.1.90", NODE).build());
        c.service(svc(NS, "itp-local-remote").clusterIP("172.30.0.52").internalLocal().port("http", "TCP", 80).build());
        c.slice(slice(NS, "itp-local-remote", "itp-local-remote-1").port("http", "TCP", 80).ready("10.0.2.91", OTHER_NODE).build());
        // Terminating and not-ready endpoints: mixed; only serving-terminating ones; none serving.
        c.service(svc(NS, "terminating").clusterIP("172.30.0.53").port("http", "TCP", 80).build());
        c.slice(slice(NS, "terminating", "terminating-1").port("http", "TCP", 80).ready("10.0.2.100", OTHER_NODE)
                .endpoint("10.0.2.101", false, true, true, OTHER_NODE).endpoint("10.0.2.102", false, false, false, OTHER_NODE)
                .endpoint("10.0.2.103", false, false, true, OTHER_NODE).build());
        c.service(svc(NS, "terminating-only").clusterIP("172.30.0.54").port("http", "TCP", 80).build());
        c.slice(slice(NS, "terminating-only", "terminating-only-1").port("http", "TCP", 80)
                .endpoint("10.0.2.104", false, true, true, OTHER_NODE).endpoint("10.0.1.105", false, true, true, NODE).build());
        c.service(svc(NS, "terminating-local").clusterIP("172.30.0.55").loadBalancer("203.0.113.13").externalLocal()
                .nodePort("http", "TCP", 80, 30085).healthCheckNodePort(32002).build());
        c.slice(slice(NS, "terminating-local", "terminating-local-1").port("http", "TCP", 80).ready("10.0.2.106", OTHER_NODE)
                .endpoint("10.0.1.107", false, true, true, NODE).build());
        c.service(svc(NS, "not-ready").clusterIP("172.30.0.56").nodePort("http", "TCP", 80, 30086).build());
        c.slice(slice(NS, "not-ready", "not-ready-1").port("http", "TCP", 80)
                .endpoint("10.0.2.108", false, false, false, OTHER_NODE).endpoint("10.0.1.109", false, false, false, NODE).build());
        // Topology: zone hints (topology-aware routing); trafficDistribution with node and zone hints.
        c.service(svc(NS, "zone-hints").clusterIP("172.30.0.57").port("http", "TCP", 80).build());
        c.slice(slice(NS, "zone-hints", "zone-hints-1").port("http", "TCP", 80)
                .hinted("10.0.1.110", NODE, List.of(ZONE), List.of()).hinted("10.0.2.111", OTHER_NODE, List.of(ZONE), List.of())
                .hinted("10.0.2.112", OTHER_NODE, List.of(OTHER_ZONE), List.of()).build());
        c.service(trafficDistribution(svc(NS, "prefer-same-node").clusterIP("172.30.0.58").port("http", "TCP", 80).build(), "PreferSameNode"));
        c.slice(slice(NS, "prefer-same-node", "prefer-same-node-1").port("http", "TCP", 80)
                .hinted("10.0.1.113", NODE, List.of(ZONE), List.of(NODE)).hinted("10.0.2.114", OTHER_NODE, List.of(ZONE), List.of(OTHER_NODE)).build());
        c.service(trafficDistribution(svc(NS, "prefer-close").clusterIP("172.30.0.59").port("http", "TCP", 80).build(), "PreferClose"));
        c.slice(slice(NS, "prefer-close", "prefer-close-1").port("http", "TCP", 80)
                .hinted("10.0.2.115", OTHER_NODE, List.of(ZONE), List.of()).hinted("10.0.2.116", OTHER_NODE, List.of(OTHER_ZONE), List.of()).build());
        // No endpoints: ClusterIP, NodePort, LoadBalancer with source ranges, externalIP.
        c.service(svc(NS, "empty").clusterIP("172.30.0.60").port("http", "TCP", 80).build());
        c.service(svc(NS, "empty-nodeport").clusterIP("172.30.0.61").nodePort("http", "TCP", 80, 30087).build());
        c.service(svc(NS, "empty-lb").clusterIP("172.30.0.62").loadBalancer("203.0.113.14", "198.51.100.0/25")
                .nodePort("http", "TCP", 80, 30088).externalIP("192.0.2.12").build());
        // Ignored: headless, ExternalName, another proxy's Service, a slice without its Service.
        c.service(svc(NS, "headless").clusterIP("None").port("http", "TCP", 80).build());
        c.slice(slice(NS, "headless", "headless-1").port("http", "TCP", 80).ready("10.0.2.120", OTHER_NODE).build());
        c.service(svc(NS, "external-name").type("ExternalName").port("http", "TCP", 80).build());
        c.service(svc(NS, "other-proxy").clusterIP("172.30.0.63").label(ProxyStateBuilder.PROXY_NAME_LABEL, "some-other-proxy")
                .port("http", "TCP", 80).build());
        c.slice(slice(NS, "other-proxy", "other-proxy-1").port("http", "TCP", 80).ready("10.0.2.121", OTHER_NODE).build());
        c.slice(slice(NS, "no-such-service", "orphan-1").port("http", "TCP", 80).ready("10.0.2.122", OTHER_NODE).build());
        // IPv6 only, and dual-stack (ClusterIP, NodePort, LoadBalancer with a VIP and source ranges in each family).
        c.service(svc(NS, "v6").clusterIPs("fd00:172:30::41").families("IPv6").port("http", "TCP", 80).build());
        c.slice(slice6(NS, "v6", "v6-1").port("http", "TCP", 8080).ready("fd00:10::2:10", OTHER_NODE).ready("fd00:10::1:10", NODE).build());
        c.service(svc(NS, "dual").dualStack("172.30.0.64", "fd00:172:30::64").nodePort("http", "TCP", 80, 30089).build());
        c.slice(slice(NS, "dual", "dual-4").port("http", "TCP", 80).ready("10.0.2.130", OTHER_NODE).build());
        c.slice(slice6(NS, "dual", "dual-6").port("http", "TCP", 80).ready("fd00:10::2:130", OTHER_NODE).ready("fd00:10::1:131", NODE).build());
        c.service(svc(NS, "dual-lb").dualStack("172.30.0.65", "fd00:172:30::65").loadBalancer("203.0.113.15", "198.51.100.0/25", "2001:db8::/48")
                .lbIngress("2001:db8:ffff::15").nodePort("http", "TCP", 80, 30090).build());
        c.slice(slice(NS, "dual-lb", "dual-lb-4").port("http", "TCP", 80).ready("10.0.2.132", OTHER_NODE).build());
        c.slice(slice6(NS, "dual-lb", "dual-lb-6").port("http", "TCP", 80).ready("fd00:10::2:132", OTHER_NODE).build());
        c.service(svc(NS, "dual-local").dualStack("172.30.0.66", "fd00:172:30::66").loadBalancer("203.0.113.16").lbIngress("2001:db8:ffff::16")
                .externalLocal().internalLocal().nodePort("http", "TCP", 80, 30091).healthCheckNodePort(32003).build());
        c.slice(slice(NS, "dual-local", "dual-local-4").port("http", "TCP", 80).ready("10.0.1.133", NODE).ready("10.0.2.133", OTHER_NODE).build());
        c.slice(slice6(NS, "dual-local", "dual-local-6").port("http", "TCP", 80).ready("fd00:10::2:133", OTHER_NODE).build());
        return c.snapshot();
    }

    /**
     * {@code features()} and {@code n} more Services, so the run is at the team's API-server scale: ClusterIP,
     * NodePort and LoadBalancer in turn, one to three endpoints each, a few on this node.
     */
    static ClusterSnapshot atScale(int n) {
        if (n > 1_700) throw new IllegalArgumentException("node ports 31000-32699 hold at most 1,700 Services, not " + n);
        ClusterSnapshot f = features();
        List<ServiceObject> services = new ArrayList<>(f.services());
        List<EndpointSliceObject> slices = new ArrayList<>(f.endpointSlices());
        for (int k = 0; k < n; k++) {
            String name = "s" + k;
            String ip = "172.30." + (10 + k / 250) + "." + (k % 250 + 1);
            TestClusters.Svc s = svc("bulk", name).clusterIP(ip);
            // A shared VIP, a port of its own per Service: two Services must not claim one VIP and port.
            int port = k % 3 == 2 ? 1000 + k : 80;
            switch (k % 3) {
                case 0 -> s.port("http", "TCP", port);
                case 1 -> s.nodePort("http", "TCP", port, 31000 + k);
                default -> s.loadBalancer("203.0.113.200").nodePort("http", "TCP", port, 31000 + k);
            }
            services.add(s.build());
            TestClusters.Slice sl = slice("bulk", name, name + "-1").port("http", "TCP", 8080);
            for (int e = 0; e <= k % 3; e++) {
                int j = k * 3 + e;
                if (j % 17 == 0) {
                    sl.ready("10.0.1." + (j % 250 + 1), NODE);
                } else {
                    sl.ready("10." + (2 + j / 62_500) + "." + (j / 250 % 250) + "." + (j % 250 + 1), OTHER_NODE);
                }
            }
            slices.add(sl.build());
        }
        return new ClusterSnapshot(services, slices, f.nodes(), f.serviceCidrs());
    }

    private static ServiceObject trafficDistribution(ServiceObject s, String value) {
        return new ServiceObject(s.meta(), s.type(), s.clusterIP(), s.clusterIPs(), s.ipFamilies(), s.ports(), s.externalIPs(),
                s.loadBalancerIngress(), s.loadBalancerSourceRanges(), s.sessionAffinity(), s.sessionAffinityTimeoutSeconds(),
                s.externalTrafficPolicy(), s.internalTrafficPolicy(), s.healthCheckNodePort(), value);
    }
}
