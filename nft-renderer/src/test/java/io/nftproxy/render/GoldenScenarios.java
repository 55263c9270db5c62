package io.nftproxy.render;

import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.proxy.IpAddress;
import io.nftproxy.proxy.IpPrefix;
import io.nftproxy.proxy.NodeContext;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import static io.nftproxy.TestClusters.NODE;
import static io.nftproxy.TestClusters.OTHER_NODE;
import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.slice6;
import static io.nftproxy.TestClusters.svc;

/**
 * The renderer's golden scenarios: one per feature, each a small cluster and a node. The expected scripts live in
 * {@code src/test/resources/golden/NAME.nft}; the kernel tests load the same scenarios into a network namespace.
 */
public final class GoldenScenarios {
    /** A named input to the renderer. */
    public record Scenario(String name, String description, ClusterSnapshot snapshot, NodeContext node) {
        @Override public String toString() { return name; }
    }

    private GoldenScenarios() {}

    public static List<Scenario> all() {
        List<Scenario> s = new ArrayList<>();
        NodeContext node = TestClusters.node();

        s.add(new Scenario("clusterip-basic", "ClusterIP with three ready endpoints on two nodes",
                cluster().service(svc("ns1", "svc1").clusterIP("172.30.0.41").port("p80", "TCP", 80).build())
                        .slice(slice("ns1", "svc1", "svc1-abc").port("p80", "TCP", 8080)
                                .ready("10.180.0.3", OTHER_NODE).ready("10.180.0.10", OTHER_NODE).ready("10.180.0.2", NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("clusterip-single-endpoint", "one endpoint: 1.36 still writes the numgen map",
                cluster().service(svc("ns1", "svc1").clusterIP("172.30.0.41").port("p80", "TCP", 80).build())
                        .slice(slice("ns1", "svc1", "s1").port("p80", "TCP", 80).ready("10.180.0.1", OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("clusterip-no-endpoints", "no slice: ClusterIP rejected via no-endpoint-services",
                cluster().service(svc("demo", "legacy-api").clusterIP("172.30.229.142").port("http", "TCP", 80).build())
                        .snapshot(), node));
        s.add(new Scenario("multi-port", "two named ports, targetPorts resolved by the slice",
                cluster().service(svc("ns2", "svc2").clusterIP("172.30.0.42").port("p80", "TCP", 80).port("p443", "TCP", 443).build())
                        .slice(slice("ns2", "svc2", "s1").port("p80", "TCP", 8080).port("p443", "TCP", 8443)
                                .ready("10.180.0.5", OTHER_NODE).ready("10.180.0.6", OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("tcp-udp-same-port", "DNS: the same port number over UDP and TCP, plus metrics",
                cluster().service(svc("kube-system", "kube-dns").clusterIP("172.30.0.10").port("dns", "UDP", 53)
                                .port("dns-tcp", "TCP", 53).port("metrics", "TCP", 9153).build())
                        .slice(slice("kube-system", "kube-dns", "kube-dns-1").port("dns", "UDP", 53).port("dns-tcp", "TCP", 53)
                                .port("metrics", "TCP", 9153).ready("10.180.1.2", OTHER_NODE).ready("10.180.1.3", NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("sctp", "an SCTP service port",
                cluster().service(svc("ns3", "sig").clusterIP("172.30.0.50").port("sig", "SCTP", 3868).build())
                        .slice(slice("ns3", "sig", "s1").port("sig", "SCTP", 3868).ready("10.180.2.1", OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("unnamed-port", "a single unnamed port: chain base ends in '/', comment is ns/svc",
                cluster().service(svc("ns4", "svc4").clusterIP("172.30.0.44").port("", "TCP", 80).build())
                        .slice(slice("ns4", "svc4", "s1").port("", "TCP", 80).ready("10.180.0.44", OTHER_NODE).build())
                        .service(svc("ns4", "empty").clusterIP("172.30.0.45").port(null, "TCP", 80).build())
                        .snapshot(), node));
        s.add(new Scenario("nodeport-cluster", "NodePort with eTP=Cluster: external chain masquerades",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080).build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080)
                                .ready("10.172.15.0", OTHER_NODE).ready("10.211.48.0", NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("nodeport-local", "NodePort with eTP=Local and a local endpoint: local chain, pod/host short-circuit",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080)
                                .externalLocal().build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080)
                                .ready("10.172.15.0", OTHER_NODE).ready("10.211.48.0", NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("nodeport-local-no-local-endpoints", "eTP=Local, endpoints only elsewhere: NodePort dropped",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080)
                                .externalLocal().build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080).ready("10.172.15.0", OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("nodeport-no-endpoints", "NodePort without endpoints: rejected in no-endpoint-nodeports",
                cluster().service(svc("demo", "np-empty").type("NodePort").clusterIP("172.30.48.157").port("http", "TCP", 80, 30081).build())
                        .snapshot(), node));
        s.add(new Scenario("nodeport-match-all", "nodePortAddresses 0.0.0.0/0 and ::/0: fib daddr type local, no nodeport-ips set",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080).build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080).ready("10.172.15.0", OTHER_NODE).build())
                        .snapshot(),
                with(node, n -> new NodeContext(n.nodeName(), n.zone(), n.nodeIPs(), n.clusterCidrs(),
                        List.of(IpPrefix.parse("0.0.0.0/0"), IpPrefix.parse("::/0")), n.localAddresses(), false, 14, true))));
        s.add(new Scenario("external-ips", "externalIPs go to the external chain; ClusterIP does not",
                cluster().service(svc("ns5", "ext").clusterIP("172.30.0.55").externalIP("192.0.2.55").externalIP("192.0.2.56")
                                .externalIP("2001:db8::55").port("http", "TCP", 80).build())
                        .slice(slice("ns5", "ext", "s1").port("http", "TCP", 8080).ready("10.180.5.1", OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("external-ips-no-endpoints", "externalIP without endpoints: rejected like the ClusterIP",
                cluster().service(svc("ns5", "ext").clusterIP("172.30.0.55").externalIP("192.0.2.55").port("http", "TCP", 80).build())
                        .snapshot(), node));
        s.add(new Scenario("loadbalancer", "LoadBalancer VIP with NodePort, eTP=Cluster",
                cluster().service(svc("demo", "hello-lb").type("LoadBalancer").clusterIP("172.30.232.108")
                                .port("http", "TCP", 80, 31950).lbIngress("203.0.113.10").build())
                        .slice(slice("demo", "hello-lb", "s1").port("http", "TCP", 8080)
                                .ready("10.172.17.0", OTHER_NODE).ready("10.211.48.0", NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("loadbalancer-source-ranges", "loadBalancerSourceRanges: firewall-ips and a firewall chain",
                cluster().service(svc("demo", "hello-lb").type("LoadBalancer").clusterIP("172.30.232.108")
                                .port("http", "TCP", 80, 31950).lbIngress("203.0.113.10")
                                .sourceRange(" 198.51.100.0/25 ").sourceRange("198.51.100.200/32").build())
                        .slice(slice("demo", "hello-lb", "s1").port("http", "TCP", 8080).ready("10.172.17.0", OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("loadbalancer-source-ranges-cover-node", "a source range covering the node IP also allows the VIP",
                cluster().service(svc("demo", "hello-lb").type("LoadBalancer").clusterIP("172.30.232.108")
                                .port("http", "TCP", 80, 31950).lbIngress("203.0.113.10").sourceRange("192.168.10.0/24").build())
                        .slice(slice("demo", "hello-lb", "s1").port("http", "TCP", 8080).ready("10.172.17.0", OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("loadbalancer-local-hcnp", "LB with eTP=Local and healthCheckNodePort, local endpoint present",
                cluster().service(svc("demo", "hello-lb").type("LoadBalancer").clusterIP("172.30.232.108")
                                .port("http", "TCP", 80, 31950).lbIngress("203.0.113.10").externalLocal().healthCheckNodePort(31692).build())
                        .slice(slice("demo", "hello-lb", "s1").port("http", "TCP", 8080)
                                .ready("10.172.17.0", OTHER_NODE).ready("10.211.48.0", NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("loadbalancer-ipmode-proxy", "ingress with ipMode Proxy or hostname only gets no elements",
                cluster().service(svc("demo", "proxied").type("LoadBalancer").clusterIP("172.30.232.109")
                                .port("http", "TCP", 80, 31951).lbIngress("203.0.113.11", null, "Proxy")
                                .lbIngress(null, "lb.example.com", null).lbIngress("203.0.113.12", null, "VIP").build())
                        .slice(slice("demo", "proxied", "s1").port("http", "TCP", 8080).ready("10.172.17.1", OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("session-affinity", "ClientIP affinity: endpoint chains and timeout sets",
                cluster().service(svc("demo", "hello-sticky").clusterIP("172.30.0.60").port("http", "TCP", 80).clientIPAffinity(600).build())
                        .slice(slice("demo", "hello-sticky", "s1").port("http", "TCP", 8080)
                                .ready("10.180.0.61", OTHER_NODE).ready("10.180.0.62", NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("session-affinity-default-timeout", "ClientIP without a config: 10800 s as the API defaults",
                cluster().service(svc("demo", "sticky-default").type("NodePort").clusterIP("172.30.0.63").port("http", "TCP", 80, 30063)
                                .clientIPAffinity(null).externalLocal().build())
                        .slice(slice("demo", "sticky-default", "s1").port("http", "TCP", 8080)
                                .ready("10.180.0.64", OTHER_NODE).ready("10.180.0.65", NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("internal-local", "iTP=Local with a local endpoint: ClusterIP goes to the local chain",
                cluster().service(svc("demo", "hello-local").clusterIP("172.30.0.70").port("http", "TCP", 80).internalLocal().build())
                        .slice(slice("demo", "hello-local", "s1").port("http", "TCP", 8080)
                                .ready("10.180.0.71", OTHER_NODE).ready("10.180.0.72", NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("internal-local-remote-only", "iTP=Local, endpoints only elsewhere: ClusterIP dropped",
                cluster().service(svc("demo", "hello-local").clusterIP("172.30.0.70").port("http", "TCP", 80).internalLocal().build())
                        .slice(slice("demo", "hello-local", "s1").port("http", "TCP", 8080).ready("10.180.0.71", OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("terminating-fallback", "nothing ready: serving+terminating endpoints are used",
                cluster().service(svc("demo", "draining").clusterIP("172.30.0.80").port("http", "TCP", 80).build())
                        .slice(slice("demo", "draining", "s1").port("http", "TCP", 8080)
                                .endpoint("10.180.0.81", false, true, true, OTHER_NODE)
                                .endpoint("10.180.0.82", false, false, true, OTHER_NODE)
                                .endpoint("10.180.0.83", false, false, false, NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("not-ready-excluded", "ready endpoints win; not-ready and terminating ones are left out",
                cluster().service(svc("demo", "hello").clusterIP("172.30.101.118").port("http", "TCP", 80).build())
                        .slice(slice("demo", "hello", "s1").port("http", "TCP", 8080)
                                .ready("10.172.172.17", OTHER_NODE).ready("10.172.211.48", NODE)
                                .endpoint("10.172.172.20", false, false, false, OTHER_NODE)
                                .endpoint("10.172.172.18", false, true, true, OTHER_NODE)
                                .endpoint("10.172.172.19", null, null, null, OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("topology-prefer-same-zone", "every ready endpoint hinted, one for our zone: zone-local endpoints only",
                cluster().service(svc("demo", "hello-zone").clusterIP("172.30.0.90").port("http", "TCP", 80).build())
                        .slice(slice("demo", "hello-zone", "s1").port("http", "TCP", 8080)
                                .hinted("10.180.0.91", OTHER_NODE, List.of("zone-a"), List.of())
                                .hinted("10.180.0.92", OTHER_NODE, List.of("zone-b"), List.of())
                                .hinted("10.180.0.93", NODE, List.of("zone-a"), List.of()).build())
                        .snapshot(), node));
        s.add(new Scenario("topology-prefer-same-node", "PreferSameNode: node hints narrow to this node's endpoint",
                cluster().service(svc("demo", "hello-near").clusterIP("172.30.0.95").port("http", "TCP", 80).build())
                        .slice(slice("demo", "hello-near", "s1").port("http", "TCP", 8080)
                                .hinted("10.180.0.96", OTHER_NODE, List.of("zone-a"), List.of(OTHER_NODE))
                                .hinted("10.180.0.97", NODE, List.of("zone-a"), List.of(NODE)).build())
                        .snapshot(), node));
        s.add(new Scenario("topology-incomplete-hints", "one ready endpoint without hints: topology ignored",
                cluster().service(svc("demo", "hello-zone").clusterIP("172.30.0.90").port("http", "TCP", 80).build())
                        .slice(slice("demo", "hello-zone", "s1").port("http", "TCP", 8080)
                                .hinted("10.180.0.91", OTHER_NODE, List.of("zone-a"), List.of())
                                .ready("10.180.0.92", OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("duplicate-endpoint-two-slices", "the same ip:port in two slices: counted once, ready copy wins",
                cluster().service(svc("demo", "moving").clusterIP("172.30.0.100").port("http", "TCP", 80).build())
                        .slice(slice("demo", "moving", "moving-a").port("http", "TCP", 8080)
                                .endpoint("10.180.0.101", false, true, true, OTHER_NODE).ready("10.180.0.102", OTHER_NODE).build())
                        .slice(slice("demo", "moving", "moving-b").port("http", "TCP", 8080).ready("10.180.0.101", NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("named-port-per-slice", "a named targetPort resolving to different numbers in two slices",
                cluster().service(svc("demo", "rolling").clusterIP("172.30.0.110").port("http", "TCP", 80).build())
                        .slice(slice("demo", "rolling", "old").port("http", "TCP", 8080).ready("10.180.0.111", OTHER_NODE).build())
                        .slice(slice("demo", "rolling", "new").port("http", "TCP", 9090).ready("10.180.0.112", OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("skipped-services", "headless, ExternalName and service-proxy-name/headless labels: nothing rendered",
                cluster().service(svc("demo", "hello-headless").clusterIP("None").port("http", "TCP", 80).build())
                        .service(svc("demo", "registry").type("ExternalName").port("http", "TCP", 80).build())
                        .service(svc("demo", "other-proxy").clusterIP("172.30.0.120").port("http", "TCP", 80)
                                .label("service.kubernetes.io/service-proxy-name", "cilium").build())
                        .service(svc("demo", "labelled-headless").clusterIP("172.30.0.121").port("http", "TCP", 80)
                                .label("service.kubernetes.io/headless", "").build())
                        .slice(slice("demo", "hello-headless", "s1").port("http", "TCP", 8080).ready("10.180.0.121", NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("dual-stack", "a dual-stack service: each table gets only its own family",
                cluster().service(svc("demo", "hello-dual").dualStack("172.30.100.10", "fd00:172:30::100a").type("NodePort")
                                .port("http", "TCP", 80, 30090).build())
                        .slice(slice("demo", "hello-dual", "v4").port("http", "TCP", 8080).ready("10.211.60.0", NODE).build())
                        .slice(slice6("demo", "hello-dual", "v6").port("http", "TCP", 8080).ready("fd00:10::3c", NODE)
                                .ready("fd00:10::1:3d", OTHER_NODE).build())
                        .serviceCidr("172.30.0.0/16", "fd00:172:30::/108")
                        .snapshot(), node));
        s.add(new Scenario("ipv6-only", "a single-stack IPv6 service with affinity and an IPv6 endpoint chain",
                cluster().service(svc("testing", "service").clusterIP("fd00:172:30::50").port("http", "TCP", 80).clientIPAffinity(60).build())
                        .slice(slice6("testing", "service", "s1").port("http", "TCP", 80)
                                .ready("fd80:abcd:12::a1b2:c3d4:e5f6:9999", OTHER_NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("masquerade-all", "masqueradeAll: every ClusterIP connection is marked",
                cluster().service(svc("ns1", "svc1").clusterIP("172.30.0.41").port("p80", "TCP", 80).build())
                        .slice(slice("ns1", "svc1", "s1").port("p80", "TCP", 80).ready("10.180.0.1", OTHER_NODE).build())
                        .snapshot(),
                with(node, n -> new NodeContext(n.nodeName(), n.zone(), n.nodeIPs(), n.clusterCidrs(), n.nodePortAddresses(),
                        n.localAddresses(), true, 14, true))));
        s.add(new Scenario("no-cluster-cidr", "no local-traffic detector: no off-cluster masquerade, no pod short-circuit",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080)
                                .externalLocal().build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080).ready("10.211.48.0", NODE).build())
                        .snapshot(),
                with(node, n -> new NodeContext(n.nodeName(), n.zone(), n.nodeIPs(), List.of(), n.nodePortAddresses(),
                        n.localAddresses(), false, 14, true))));
        s.add(new Scenario("service-cidrs", "ServiceCIDRs known: unallocated ClusterIPs dropped in cluster-ips-check",
                cluster().service(svc("default", "kubernetes").clusterIP("172.30.0.1").port("https", "TCP", 443).build())
                        .slice(slice("default", "kubernetes", "kubernetes").port("https", "TCP", 6443).ready("192.168.10.17", null).build())
                        .serviceCidr("172.30.0.0/16", "fd00:172:30::/108").serviceCidr("172.31.0.0/24")
                        .snapshot(), node));
        s.add(new Scenario("custom-masquerade-bit", "masqueradeBit 5: mark 0x20 everywhere",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080).build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080).ready("10.172.15.0", OTHER_NODE).build())
                        .snapshot(),
                with(node, n -> new NodeContext(n.nodeName(), n.zone(), n.nodeIPs(), n.clusterCidrs(), n.nodePortAddresses(),
                        n.localAddresses(), false, 5, true))));
        s.add(new Scenario("hairpin-shared-endpoint", "one local endpoint behind two services: one hairpin element",
                cluster().service(svc("demo", "a").clusterIP("172.30.0.130").port("http", "TCP", 80).build())
                        .service(svc("demo", "b").clusterIP("172.30.0.131").port("http", "TCP", 80).build())
                        .slice(slice("demo", "a", "a1").port("http", "TCP", 8080).ready("10.211.48.0", NODE).build())
                        .slice(slice("demo", "b", "b1").port("http", "TCP", 8080).ready("10.211.48.0", NODE).build())
                        .snapshot(), node));
        s.add(new Scenario("no-node-ip", "a node with no known addresses: NodePorts match every local address",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080).build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080).ready("10.172.15.0", OTHER_NODE).build())
                        .snapshot(), NodeContext.minimal(NODE)));
        return s;
    }

    private static NodeContext with(NodeContext n, UnaryOperator<NodeContext> f) { return f.apply(n); }

    static IpAddress ip(String s) { return IpAddress.parse(s); }
}
