package io.nftproxy.it;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.proxy.NodeContext;
import io.nftproxy.TestAddresses;
import io.nftproxy.TestClusters;

import java.util.ArrayList;
import java.util.List;

import static io.nftproxy.TestAddresses.*;
import static io.nftproxy.TestClusters.svc;

/**
 * Cluster states that together exercise every rule form the renderer writes, for tests that load rendered tables
 * into a real kernel, on {@link TestAddresses}' plan. Add a scenario here and every kernel test that iterates {@link #all()} covers it.
 */
public final class KernelScenarios {
    public static final String NODE = TestAddresses.NODE;
    public static final String OTHER_NODE = TestAddresses.OTHER_NODE;

    /** One cluster state and the node it is rendered for; {@code ipv6} when the ip6 table must have content. */
    public record Scenario(String name, ClusterSnapshot snapshot, NodeContext node, boolean ipv6) {
        @Override public String toString() { return name; }
    }

    private KernelScenarios() {}

    public static List<Scenario> all() {
        List<Scenario> out = new ArrayList<>();
        out.add(new Scenario("plain ClusterIP", cluster()
                .with(svc("default", "web").clusterIP("172.30.0.10").port("http", "TCP", 80))
                .with(slice("default", "web").port("http", "TCP", 8080).ready("10.0.1.5", OTHER_NODE).ready("10.0.2.7", OTHER_NODE))
                .snapshot(), node(), false));
        out.add(new Scenario("single endpoint, UDP and SCTP", cluster()
                .with(svc("kube-system", "dns").clusterIP("172.30.0.53").port("dns", "UDP", 53).port("dns-sctp", "SCTP", 5353))
                .with(slice("kube-system", "dns").port("dns", "UDP", 53).port("dns-sctp", "SCTP", 5353).ready("10.0.1.9", NODE))
                .snapshot(), node(), false));
        out.add(new Scenario("NodePort", cluster()
                .with(svc("default", "np").clusterIP("172.30.0.20").nodePort("", "TCP", 80, 30080).nodePort("udp", "UDP", 81, 30081))
                .with(slice("default", "np").port("", "TCP", 8080).port("udp", "UDP", 8081).ready("10.0.1.5", NODE).ready("10.0.2.7", OTHER_NODE))
                .snapshot(), nodeWithNodePortCidrs(), false));
        out.add(new Scenario("LoadBalancer with source ranges and eTP Local", cluster()
                .with(svc("prod", "lb").clusterIP("172.30.0.30").nodePort("https", "TCP", 443, 31443)
                        .loadBalancer(LB_VIP, "192.0.2.128/25", EXTERNAL_CIDR, LAN_CIDR)
                        .externalIP("192.0.2.99").externalLocal().healthCheckNodePort(32000))
                .with(slice("prod", "lb").port("https", "TCP", 8443).ready("10.0.1.5", NODE).ready("10.0.2.7", OTHER_NODE))
                .snapshot(), nodeWithNodePortCidrs(), false));
        // 203.0.113.0/25 covers the VIP, the LAN covers the node (so the VIP is allowed again), and three
        // adjacent /24s: the kernel stores the anonymous set merged, as 10.0.0.0-10.0.2.255 and 203.0.113.0/25.
        out.add(new Scenario("source ranges the kernel merges", cluster()
                .with(svc("prod", "lb-ranges").clusterIP("172.30.0.32").nodePort("", "TCP", 80, 31081)
                        .loadBalancer(LB_VIP, "203.0.113.0/25", LAN_CIDR, "10.0.1.0/24", "10.0.0.0/24", "10.0.2.0/24"))
                .with(slice("prod", "lb-ranges").port("", "TCP", 80).ready("10.0.2.7", OTHER_NODE))
                .snapshot(), node(), false));
        out.add(new Scenario("eTP Local without local endpoints", cluster()
                .with(svc("prod", "lb-remote").clusterIP("172.30.0.31").nodePort("", "TCP", 80, 31080)
                        .loadBalancer("203.0.113.11").externalLocal().healthCheckNodePort(32001))
                .with(slice("prod", "lb-remote").port("", "TCP", 80).ready("10.0.2.7", OTHER_NODE))
                .snapshot(), node(), false));
        out.add(new Scenario("session affinity", cluster()
                .with(svc("default", "sticky").clusterIP("172.30.0.40").nodePort("", "TCP", 80, 30040).clientIPAffinity(600))
                .with(slice("default", "sticky").port("", "TCP", 8080).ready("10.0.1.5", NODE).ready("10.0.2.7", OTHER_NODE))
                .snapshot(), node(), false));
        out.add(new Scenario("iTP Local", cluster()
                .with(svc("default", "local-only").clusterIP("172.30.0.50").port("", "TCP", 80).internalLocal())
                .with(svc("default", "local-none").clusterIP("172.30.0.51").port("", "TCP", 80).internalLocal())
                .with(slice("default", "local-only").port("", "TCP", 8080).ready("10.0.1.5", NODE).ready("10.0.2.7", OTHER_NODE))
                .with(slice("default", "local-none").port("", "TCP", 8080).ready("10.0.2.8", OTHER_NODE))
                .snapshot(), node(), false));
        out.add(new Scenario("no endpoints", cluster()
                .with(svc("default", "empty").clusterIP("172.30.0.60").nodePort("web", "TCP", 80, 30060).loadBalancer("203.0.113.60")
                        .externalIP("192.0.2.61"))
                .snapshot(), node(), false));
        out.add(new Scenario("dual-stack IPv6", cluster()
                .with(svc("default", "ds").dualStack("172.30.0.70", "fd00:172:30::70").nodePort("", "TCP", 80, 30070))
                .with(svc("default", "ds-sticky").clusterIPs("fd00:172:30::71").families("IPv6").nodePort("", "UDP", 53, 30071)
                        .loadBalancer("2001:db8::71", "2001:db8:1::/48").clientIPAffinity(300))
                .with(slice("default", "ds").port("", "TCP", 8080).ready("10.0.1.5", NODE))
                .with(TestClusters.slice6("default", "ds", "ds-v6").port("", "TCP", 8080)
                        .ready("fd00:10::1:5", NODE).ready("fd00:10::2:7", OTHER_NODE))
                .with(TestClusters.slice6("default", "ds-sticky", "ds-sticky-abcde").port("", "UDP", 5353)
                        .ready("fd00:10::1:9", NODE).ready("fd00:10::2:9", OTHER_NODE))
                .snapshot(), nodeDualStack(), true));
        out.add(new Scenario("masqueradeAll", cluster()
                .with(svc("default", "web").clusterIP("172.30.0.10").port("http", "TCP", 80))
                .with(slice("default", "web").port("http", "TCP", 8080).ready("10.0.1.5", NODE))
                .snapshot(),
                new NodeContext(NODE, null, List.of(ip(NODE_IP)), List.of(), List.of(), List.of(), true,
                        NodeContext.DEFAULT_MASQUERADE_BIT, true), false));
        out.add(new Scenario("nodePortAddresses match-all", cluster()
                .with(svc("default", "np").clusterIP("172.30.0.20").nodePort("", "TCP", 80, 30080))
                .with(slice("default", "np").port("", "TCP", 8080).ready("10.0.1.5", NODE))
                .snapshot(),
                new NodeContext(NODE, null, List.of(ip(NODE_IP)), List.of(cidr(CLUSTER_CIDR)),
                        List.of(cidr("0.0.0.0/0")), List.of(ip(NODE_IP), ip("127.0.0.1")), false,
                        NodeContext.DEFAULT_MASQUERADE_BIT, true), false));
        return out;
    }

    /** The service CIDRs every scenario's cluster has. */
    private static TestClusters cluster() { return TestClusters.cluster().serviceCidr(SERVICE_CIDR, SERVICE_CIDR6); }

    /** An IPv4 slice named as the EndpointSlice controller would ({@code SERVICE-abcde}). */
    private static TestClusters.Slice slice(String ns, String service) { return TestClusters.slice(ns, service, service + "-abcde"); }

    // ---- node contexts ----

    static NodeContext node() {
        return new NodeContext(NODE, null, List.of(ip(NODE_IP)), List.of(cidr(CLUSTER_CIDR)), List.of(),
                List.of(ip(NODE_IP)), false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }

    static NodeContext nodeWithNodePortCidrs() {
        return new NodeContext(NODE, null, List.of(ip(NODE_IP)), List.of(cidr(CLUSTER_CIDR)),
                List.of(cidr(LAN_CIDR)), List.of(ip(NODE_IP), ip(OTHER_NODE_IP), ip(NODE_POD_GATEWAY)),
                false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }

    static NodeContext nodeDualStack() {
        return new NodeContext(NODE, null, List.of(ip(NODE_IP), ip(NODE_IP6)),
                List.of(cidr(CLUSTER_CIDR), cidr(CLUSTER_CIDR6)),
                List.of(cidr(LAN_CIDR), cidr(LAN6_CIDR)),
                List.of(ip(NODE_IP), ip(NODE_IP6), ip("::1")), false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }
}
