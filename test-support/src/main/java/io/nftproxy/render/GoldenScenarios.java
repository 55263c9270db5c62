package io.nftproxy.render;

import io.nftproxy.TestAddresses;
import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.LocalTraffic;
import io.nftproxy.service.NodeContext;
import io.nftproxy.net.Protocol;
import io.nftproxy.trace.Origin;
import io.nftproxy.trace.Outcome;
import io.nftproxy.trace.Packet;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;

import static io.nftproxy.TestAddresses.*;
import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.slice6;
import static io.nftproxy.TestClusters.svc;

/**
 * The renderer's golden scenarios: one per feature, each a small cluster, a node, and the packet flows that show
 * what the feature does. The expected scripts live in {@code src/test/resources/golden/NAME.nft}; the kernel tests
 * load the same scenarios into a network namespace; {@code GoldenFlowTest} runs every flow through the tracer.
 *
 * <p>Addresses follow {@link TestAddresses}: every endpoint inside its node's pod range, flows from
 * {@code POD_CLIENT} (a pod on this node that is no endpoint), {@code EXTERNAL_CLIENT} (off the node) or the node.
 * Expected outcomes come from the reference's packet-level semantics (kube-proxy-nftables.md, section 2.3), not from running the tracer.
 */
public final class GoldenScenarios {
    /** A named input to the renderer, with the flows that must come out of its table as stated. */
    public record Scenario(String name, String description, ClusterSnapshot snapshot, NodeContext node, List<Flow> flows) {
        public Scenario {
            flows = List.copyOf(flows);
        }

        @Override public String toString() { return name; }
    }

    /**
     * The first packet of a new connection and where it must end up. {@code dnatTargets} are {@code ip:port} in numgen
     * index order (empty unless DNAT); {@code masquerade} is "yes" or "no", or per target {@code ip:port=yes|...} when
     * they differ (hairpin), null for REJECT and DROP; {@code chain} is the name, or a name prefix, of the chain that
     * rejects or drops (null otherwise).
     */
    public record Flow(String what, Origin origin, String src, String dst, Protocol proto, int dport,
                       Outcome.Kind outcome, List<String> dnatTargets, String masquerade, String chain) {
        public Flow {
            dnatTargets = List.copyOf(dnatTargets);
        }

        public Packet packet() { return Packet.of(origin, src, dst, proto, dport); }

        @Override public String toString() {
            return what + " (" + origin.name().toLowerCase(Locale.ROOT) + " " + proto.nftName() + " " + src + " -> " + dst
                    + ":" + dport + ")";
        }
    }

    private static final Origin POD = Origin.POD;
    private static final Origin EXTERNAL = Origin.EXTERNAL;
    private static final Origin HOST = Origin.HOST;

    private GoldenScenarios() {}

    /**
     * The folder under nft-renderer's test resources holding a layout's golden files: {@code golden},
     * {@code golden-fast}, {@code golden-flat}.
     */
    public static String goldenDir(TableLayout layout) {
        return layout == TableLayout.UPSTREAM ? "golden" : "golden-" + layout.cliName();
    }

    public static List<Scenario> all() {
        List<Scenario> s = new ArrayList<>();
        NodeContext node = TestClusters.node();

        s.add(new Scenario("clusterip-basic", "ClusterIP with three ready endpoints on two nodes",
                cluster().service(svc("ns1", "svc1").clusterIP("172.30.0.41").port("p80", "TCP", 80).build())
                        .slice(slice("ns1", "svc1", "svc1-abc").port("p80", "TCP", 8080)
                                .ready("10.0.2.3", OTHER_NODE).ready("10.0.2.12", OTHER_NODE).ready("10.0.1.2", NODE).build())
                        .snapshot(), node, flows(
                dnat("ClusterIP from a pod", POD, POD_CLIENT, "172.30.0.41", "tcp", 80, "no",
                        "10.0.1.2:8080", "10.0.2.12:8080", "10.0.2.3:8080"),
                dnat("ClusterIP from off-node: masquerade from outside cluster", EXTERNAL, EXTERNAL_CLIENT, "172.30.0.41", "tcp", 80, "yes",
                        "10.0.1.2:8080", "10.0.2.12:8080", "10.0.2.3:8080"),
                dnat("ClusterIP from the host", HOST, NODE_IP, "172.30.0.41", "tcp", 80, "yes",
                        "10.0.1.2:8080", "10.0.2.12:8080", "10.0.2.3:8080"),
                dnat("hairpin: the local endpoint calls its own service", POD, "10.0.1.2", "172.30.0.41", "tcp", 80,
                        "10.0.1.2:8080=yes|10.0.2.12:8080=no|10.0.2.3:8080=no",
                        "10.0.1.2:8080", "10.0.2.12:8080", "10.0.2.3:8080"),
                reject("undefined port", POD, POD_CLIENT, "172.30.0.41", "tcp", 81, "cluster-ips-check"),
                reject("UDP to a TCP-only port", POD, POD_CLIENT, "172.30.0.41", "udp", 80, "cluster-ips-check"),
                untouched("no ServiceCIDR known: another address is not dropped", POD, POD_CLIENT, "172.30.0.99", "tcp", 80))));
        s.add(new Scenario("clusterip-single-endpoint", "one endpoint: 1.36 still writes the numgen map",
                cluster().service(svc("ns1", "svc1").clusterIP("172.30.0.41").port("p80", "TCP", 80).build())
                        .slice(slice("ns1", "svc1", "s1").port("p80", "TCP", 80).ready("10.0.2.4", OTHER_NODE).build())
                        .snapshot(), node, flows(
                dnat("ClusterIP from a pod", POD, POD_CLIENT, "172.30.0.41", "tcp", 80, "no", "10.0.2.4:80"),
                dnat("ClusterIP from off-node", EXTERNAL, EXTERNAL_CLIENT, "172.30.0.41", "tcp", 80, "yes", "10.0.2.4:80"))));
        s.add(new Scenario("clusterip-no-endpoints", "no slice: ClusterIP rejected via no-endpoint-services",
                cluster().service(svc("demo", "legacy-api").clusterIP("172.30.229.142").port("http", "TCP", 80).build())
                        .snapshot(), node, flows(
                reject("ClusterIP without endpoints from a pod", POD, POD_CLIENT, "172.30.229.142", "tcp", 80, "reject-chain"),
                reject("ClusterIP without endpoints from the host", HOST, NODE_IP, "172.30.229.142", "tcp", 80, "reject-chain"),
                reject("undefined port of the same ClusterIP", POD, POD_CLIENT, "172.30.229.142", "tcp", 8080, "cluster-ips-check"))));
        s.add(new Scenario("multi-port", "two named ports, targetPorts resolved by the slice",
                cluster().service(svc("ns2", "svc2").clusterIP("172.30.0.42").port("p80", "TCP", 80).port("p443", "TCP", 443).build())
                        .slice(slice("ns2", "svc2", "s1").port("p80", "TCP", 8080).port("p443", "TCP", 8443)
                                .ready("10.0.2.5", OTHER_NODE).ready("10.0.2.6", OTHER_NODE).build())
                        .snapshot(), node, flows(
                dnat("port 80 to targetPort 8080", POD, POD_CLIENT, "172.30.0.42", "tcp", 80, "no", "10.0.2.5:8080", "10.0.2.6:8080"),
                dnat("port 443 to targetPort 8443", POD, POD_CLIENT, "172.30.0.42", "tcp", 443, "no", "10.0.2.5:8443", "10.0.2.6:8443"),
                reject("a targetPort is not a service port", POD, POD_CLIENT, "172.30.0.42", "tcp", 8080, "cluster-ips-check"))));
        s.add(new Scenario("tcp-udp-same-port", "DNS: the same port number over UDP and TCP, plus metrics",
                cluster().service(svc("kube-system", "kube-dns").clusterIP("172.30.0.10").port("dns", "UDP", 53)
                                .port("dns-tcp", "TCP", 53).port("metrics", "TCP", 9153).build())
                        .slice(slice("kube-system", "kube-dns", "kube-dns-1").port("dns", "UDP", 53).port("dns-tcp", "TCP", 53)
                                .port("metrics", "TCP", 9153).ready("10.0.2.2", OTHER_NODE).ready("10.0.1.3", NODE).build())
                        .snapshot(), node, flows(
                dnat("DNS over UDP", POD, POD_CLIENT, "172.30.0.10", "udp", 53, "no", "10.0.1.3:53", "10.0.2.2:53"),
                dnat("DNS over TCP", POD, POD_CLIENT, "172.30.0.10", "tcp", 53, "no", "10.0.1.3:53", "10.0.2.2:53"),
                dnat("DNS over UDP from the host", HOST, NODE_IP, "172.30.0.10", "udp", 53, "yes", "10.0.1.3:53", "10.0.2.2:53"),
                dnat("metrics", POD, POD_CLIENT, "172.30.0.10", "tcp", 9153, "no", "10.0.1.3:9153", "10.0.2.2:9153"),
                reject("UDP to the TCP-only metrics port", POD, POD_CLIENT, "172.30.0.10", "udp", 9153, "cluster-ips-check"),
                reject("SCTP to the DNS port", POD, POD_CLIENT, "172.30.0.10", "sctp", 53, "cluster-ips-check"))));
        s.add(new Scenario("sctp", "an SCTP service port",
                cluster().service(svc("ns3", "sig").clusterIP("172.30.0.50").port("sig", "SCTP", 3868).build())
                        .slice(slice("ns3", "sig", "s1").port("sig", "SCTP", 3868).ready("10.0.2.21", OTHER_NODE).build())
                        .snapshot(), node, flows(
                dnat("SCTP ClusterIP from a pod", POD, POD_CLIENT, "172.30.0.50", "sctp", 3868, "no", "10.0.2.21:3868"),
                dnat("SCTP ClusterIP from off-node", EXTERNAL, EXTERNAL_CLIENT, "172.30.0.50", "sctp", 3868, "yes", "10.0.2.21:3868"),
                reject("TCP to the SCTP port", POD, POD_CLIENT, "172.30.0.50", "tcp", 3868, "cluster-ips-check"))));
        s.add(new Scenario("unnamed-port", "a single unnamed port: chain base ends in '/', comment is ns/svc",
                cluster().service(svc("ns4", "svc4").clusterIP("172.30.0.44").port("", "TCP", 80).build())
                        .slice(slice("ns4", "svc4", "s1").port("", "TCP", 80).ready("10.0.2.44", OTHER_NODE).build())
                        .service(svc("ns4", "empty").clusterIP("172.30.0.45").port(null, "TCP", 80).build())
                        .snapshot(), node, flows(
                dnat("the unnamed port", POD, POD_CLIENT, "172.30.0.44", "tcp", 80, "no", "10.0.2.44:80"),
                reject("a null port name without endpoints", POD, POD_CLIENT, "172.30.0.45", "tcp", 80, "reject-chain"))));
        s.add(new Scenario("nodeport-cluster", "NodePort with eTP=Cluster: external chain masquerades",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080).build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080)
                                .ready("10.0.2.150", OTHER_NODE).ready("10.0.1.48", NODE).build())
                        .snapshot(), node, flows(
                dnat("NodePort from off-node", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "tcp", 30080, "yes", "10.0.1.48:8080", "10.0.2.150:8080"),
                dnat("NodePort from a pod: eTP=Cluster masquerades every source", POD, POD_CLIENT, NODE_IP, "tcp", 30080, "yes",
                        "10.0.1.48:8080", "10.0.2.150:8080"),
                dnat("NodePort from the host", HOST, NODE_IP, NODE_IP, "tcp", 30080, "yes", "10.0.1.48:8080", "10.0.2.150:8080"),
                dnat("ClusterIP from a pod", POD, POD_CLIENT, "172.30.48.156", "tcp", 80, "no", "10.0.1.48:8080", "10.0.2.150:8080"),
                untouched("UDP to the TCP NodePort reaches the node's own socket", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "udp", 30080))));
        s.add(new Scenario("nodeport-local", "NodePort with eTP=Local and a local endpoint: local chain, pod/host short-circuit",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080)
                                .externalLocal().build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080)
                                .ready("10.0.2.150", OTHER_NODE).ready("10.0.1.48", NODE).build())
                        .snapshot(), node, flows(
                dnat("NodePort from off-node: local endpoint only, client IP kept", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "tcp", 30080, "no",
                        "10.0.1.48:8080"),
                dnat("NodePort from a pod: short-circuit to every endpoint", POD, POD_CLIENT, NODE_IP, "tcp", 30080, "no",
                        "10.0.1.48:8080", "10.0.2.150:8080"),
                dnat("NodePort from the host: short-circuit, masqueraded", HOST, NODE_IP, NODE_IP, "tcp", 30080, "yes",
                        "10.0.1.48:8080", "10.0.2.150:8080"),
                dnat("ClusterIP from off-node is not subject to eTP", EXTERNAL, EXTERNAL_CLIENT, "172.30.48.156", "tcp", 80, "yes",
                        "10.0.1.48:8080", "10.0.2.150:8080"))));
        s.add(new Scenario("nodeport-local-no-local-endpoints", "eTP=Local, endpoints only elsewhere: NodePort dropped",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080)
                                .externalLocal().build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080).ready("10.0.2.150", OTHER_NODE).build())
                        .snapshot(), node, flows(
                drop("NodePort from off-node", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "tcp", 30080, "nodeport-endpoints-check"),
                dnat("NodePort from a pod still short-circuits", POD, POD_CLIENT, NODE_IP, "tcp", 30080, "no", "10.0.2.150:8080"),
                dnat("NodePort from the host still short-circuits", HOST, NODE_IP, NODE_IP, "tcp", 30080, "yes", "10.0.2.150:8080"),
                dnat("ClusterIP from a pod", POD, POD_CLIENT, "172.30.48.156", "tcp", 80, "no", "10.0.2.150:8080"))));
        s.add(new Scenario("nodeport-no-endpoints", "NodePort without endpoints: rejected in no-endpoint-nodeports",
                cluster().service(svc("demo", "np-empty").type("NodePort").clusterIP("172.30.48.157").port("http", "TCP", 80, 30081).build())
                        .snapshot(), node, flows(
                reject("NodePort from off-node", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "tcp", 30081, "reject-chain"),
                reject("NodePort from the host", HOST, NODE_IP, NODE_IP, "tcp", 30081, "reject-chain"),
                reject("ClusterIP from a pod", POD, POD_CLIENT, "172.30.48.157", "tcp", 80, "reject-chain"))));
        // kube-proxy's other local-traffic detectors: the same cluster under each; only the detector's match differs.
        ClusterSnapshot detectCluster = cluster()
                .service(svc("ns1", "svc1").clusterIP("172.30.0.41").port("p80", "TCP", 80).build())
                .slice(slice("ns1", "svc1", "s1").port("p80", "TCP", 8080).ready("10.0.2.3", OTHER_NODE).build())
                .service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080)
                        .externalLocal().build())
                .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080)
                        .ready("10.0.2.150", OTHER_NODE).ready("10.0.1.48", NODE).build())
                .snapshot();
        s.add(new Scenario("detect-local-node-cidr", "detectLocalMode NodeCIDR: this node's podCIDRs, not the cluster's",
                detectCluster, with(node, n -> detector(n, LocalTraffic.bySource(
                        List.of(IpPrefix.parse(TestAddresses.POD_CIDR), IpPrefix.parse(TestAddresses.POD_CIDR6))))), flows(
                dnat("ClusterIP from a pod of this node", POD, POD_CLIENT, "172.30.0.41", "tcp", 80, "no", "10.0.2.3:8080"),
                dnat("ClusterIP from a pod of another node is masqueraded", EXTERNAL, OTHER_POD, "172.30.0.41", "tcp", 80, "yes",
                        "10.0.2.3:8080"),
                dnat("NodePort eTP=Local from a pod of this node: short-circuit", POD, POD_CLIENT, NODE_IP, "tcp", 30080, "no",
                        "10.0.1.48:8080", "10.0.2.150:8080"),
                dnat("NodePort eTP=Local from a pod of another node: local endpoint only", EXTERNAL, OTHER_POD, NODE_IP, "tcp",
                        30080, "no", "10.0.1.48:8080"))));
        s.add(new Scenario("detect-local-bridge-interface", "detectLocalMode BridgeInterface: what enters on cbr0 is a pod's",
                detectCluster, with(node, n -> detector(n, LocalTraffic.byInterface("cbr0", false))), flows(
                dnat("ClusterIP from a pod", POD, POD_CLIENT, "172.30.0.41", "tcp", 80, "no", "10.0.2.3:8080"),
                dnat("ClusterIP from off-node, even from a cluster address", EXTERNAL, OTHER_POD, "172.30.0.41", "tcp", 80, "yes",
                        "10.0.2.3:8080"),
                dnat("ClusterIP from the host: no input interface, not marked", HOST, NODE_IP, "172.30.0.41", "tcp", 80, "no",
                        "10.0.2.3:8080"),
                dnat("NodePort eTP=Local from a pod: short-circuit", POD, POD_CLIENT, NODE_IP, "tcp", 30080, "no",
                        "10.0.1.48:8080", "10.0.2.150:8080"))));
        s.add(new Scenario("detect-local-interface-name-prefix", "detectLocalMode InterfaceNamePrefix: what enters on veth* is a pod's",
                detectCluster, with(node, n -> detector(n, LocalTraffic.byInterface("veth", true))), flows(
                dnat("ClusterIP from a pod", POD, POD_CLIENT, "172.30.0.41", "tcp", 80, "no", "10.0.2.3:8080"),
                dnat("ClusterIP from off-node", EXTERNAL, EXTERNAL_CLIENT, "172.30.0.41", "tcp", 80, "yes", "10.0.2.3:8080"),
                dnat("NodePort eTP=Local from off-node: local endpoint only", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "tcp", 30080, "no",
                        "10.0.1.48:8080"),
                dnat("NodePort eTP=Local from a pod: short-circuit", POD, POD_CLIENT, NODE_IP, "tcp", 30080, "no",
                        "10.0.1.48:8080", "10.0.2.150:8080"))));
        s.add(new Scenario("nodeport-match-all", "nodePortAddresses 0.0.0.0/0 and ::/0: fib daddr type local, no nodeport-ips set",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080).build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080).ready("10.0.2.150", OTHER_NODE).build())
                        .snapshot(),
                with(node, n -> new NodeContext(n.nodeName(), n.zone(), n.nodeIPs(), n.clusterCidrs(),
                        List.of(IpPrefix.parse("0.0.0.0/0"), IpPrefix.parse("::/0")), n.localAddresses(), false, 14, true)), flows(
                dnat("NodePort on the node IP", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "tcp", 30080, "yes", "10.0.2.150:8080"),
                untouched("NodePort on loopback is not served", HOST, "127.0.0.1", "127.0.0.1", "tcp", 30080))));
        s.add(new Scenario("external-ips", "externalIPs go to the external chain; ClusterIP does not",
                cluster().service(svc("ns5", "ext").clusterIP("172.30.0.55").externalIP("192.0.2.55").externalIP("192.0.2.56")
                                .externalIP("2001:db8::55").port("http", "TCP", 80).build())
                        .slice(slice("ns5", "ext", "s1").port("http", "TCP", 8080).ready("10.0.2.51", OTHER_NODE).build())
                        .snapshot(), node, flows(
                dnat("externalIP from off-node", EXTERNAL, EXTERNAL_CLIENT, "192.0.2.55", "tcp", 80, "yes", "10.0.2.51:8080"),
                dnat("second externalIP from a pod: masqueraded too", POD, POD_CLIENT, "192.0.2.56", "tcp", 80, "yes", "10.0.2.51:8080"),
                dnat("ClusterIP from a pod is not masqueraded", POD, POD_CLIENT, "172.30.0.55", "tcp", 80, "no", "10.0.2.51:8080"),
                untouched("IPv6 externalIP of an IPv4-only service is not served", EXTERNAL, EXTERNAL_CLIENT6, "2001:db8::55", "tcp", 80),
                untouched("another port of the externalIP is not the service", EXTERNAL, EXTERNAL_CLIENT, "192.0.2.55", "tcp", 443))));
        s.add(new Scenario("external-ips-no-endpoints", "externalIP without endpoints: rejected like the ClusterIP",
                cluster().service(svc("ns5", "ext").clusterIP("172.30.0.55").externalIP("192.0.2.55").port("http", "TCP", 80).build())
                        .snapshot(), node, flows(
                reject("externalIP from off-node", EXTERNAL, EXTERNAL_CLIENT, "192.0.2.55", "tcp", 80, "reject-chain"),
                reject("ClusterIP from a pod", POD, POD_CLIENT, "172.30.0.55", "tcp", 80, "reject-chain"))));
        s.add(new Scenario("loadbalancer", "LoadBalancer VIP with NodePort, eTP=Cluster",
                cluster().service(svc("demo", "hello-lb").type("LoadBalancer").clusterIP("172.30.232.108")
                                .port("http", "TCP", 80, 31950).lbIngress("203.0.113.10").build())
                        .slice(slice("demo", "hello-lb", "s1").port("http", "TCP", 8080)
                                .ready("10.0.2.170", OTHER_NODE).ready("10.0.1.48", NODE).build())
                        .snapshot(), node, flows(
                dnat("LB VIP from off-node", EXTERNAL, EXTERNAL_CLIENT, "203.0.113.10", "tcp", 80, "yes", "10.0.1.48:8080", "10.0.2.170:8080"),
                dnat("LB VIP from a pod", POD, POD_CLIENT, "203.0.113.10", "tcp", 80, "yes", "10.0.1.48:8080", "10.0.2.170:8080"),
                dnat("the LB's NodePort", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "tcp", 31950, "yes", "10.0.1.48:8080", "10.0.2.170:8080"))));
        s.add(new Scenario("loadbalancer-source-ranges", "loadBalancerSourceRanges: firewall-ips and a firewall chain",
                cluster().service(svc("demo", "hello-lb").type("LoadBalancer").clusterIP("172.30.232.108")
                                .port("http", "TCP", 80, 31950).lbIngress("203.0.113.10")
                                .sourceRange(" 198.51.100.0/25 ").sourceRange("198.51.100.200/32").build())
                        .slice(slice("demo", "hello-lb", "s1").port("http", "TCP", 8080).ready("10.0.2.170", OTHER_NODE).build())
                        .snapshot(), node, flows(
                dnat("LB VIP from inside the first range", EXTERNAL, EXTERNAL_CLIENT, "203.0.113.10", "tcp", 80, "yes", "10.0.2.170:8080"),
                dnat("LB VIP from the /32 range", EXTERNAL, "198.51.100.200", "203.0.113.10", "tcp", 80, "yes", "10.0.2.170:8080"),
                drop("LB VIP from outside the ranges", EXTERNAL, "198.51.100.150", "203.0.113.10", "tcp", 80, "firewall-"),
                drop("LB VIP from a pod outside the ranges", POD, POD_CLIENT, "203.0.113.10", "tcp", 80, "firewall-"),
                dnat("NodePort bypasses the source ranges", EXTERNAL, "198.51.100.150", NODE_IP, "tcp", 31950, "yes", "10.0.2.170:8080"),
                dnat("ClusterIP bypasses the source ranges", EXTERNAL, "198.51.100.150", "172.30.232.108", "tcp", 80, "yes",
                        "10.0.2.170:8080"))));
        s.add(new Scenario("loadbalancer-source-ranges-cover-node", "a source range covering the node IP also allows the VIP",
                cluster().service(svc("demo", "hello-lb").type("LoadBalancer").clusterIP("172.30.232.108")
                                .port("http", "TCP", 80, 31950).lbIngress("203.0.113.10").sourceRange("192.168.10.0/24").build())
                        .slice(slice("demo", "hello-lb", "s1").port("http", "TCP", 8080).ready("10.0.2.170", OTHER_NODE).build())
                        .snapshot(), node, flows(
                dnat("LB VIP from the node's subnet", EXTERNAL, "192.168.10.50", "203.0.113.10", "tcp", 80, "yes", "10.0.2.170:8080"),
                dnat("LB VIP from the VIP itself (SNATed to it)", EXTERNAL, "203.0.113.10", "203.0.113.10", "tcp", 80, "yes",
                        "10.0.2.170:8080"),
                dnat("LB VIP from the host", HOST, NODE_IP, "203.0.113.10", "tcp", 80, "yes", "10.0.2.170:8080"),
                drop("LB VIP from outside the range", EXTERNAL, EXTERNAL_CLIENT, "203.0.113.10", "tcp", 80, "firewall-"))));
        s.add(new Scenario("loadbalancer-local-hcnp", "LB with eTP=Local and healthCheckNodePort, local endpoint present",
                cluster().service(svc("demo", "hello-lb").type("LoadBalancer").clusterIP("172.30.232.108")
                                .port("http", "TCP", 80, 31950).lbIngress("203.0.113.10").externalLocal().healthCheckNodePort(31692).build())
                        .slice(slice("demo", "hello-lb", "s1").port("http", "TCP", 8080)
                                .ready("10.0.2.170", OTHER_NODE).ready("10.0.1.48", NODE).build())
                        .snapshot(), node, flows(
                dnat("LB VIP from off-node: local endpoint, client IP kept", EXTERNAL, EXTERNAL_CLIENT, "203.0.113.10", "tcp", 80, "no",
                        "10.0.1.48:8080"),
                dnat("the LB's NodePort from off-node", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "tcp", 31950, "no", "10.0.1.48:8080"),
                dnat("LB VIP from a pod: short-circuit to every endpoint", POD, POD_CLIENT, "203.0.113.10", "tcp", 80, "no",
                        "10.0.1.48:8080", "10.0.2.170:8080"),
                dnat("LB VIP from the host: short-circuit, masqueraded", HOST, NODE_IP, "203.0.113.10", "tcp", 80, "yes",
                        "10.0.1.48:8080", "10.0.2.170:8080"),
                untouched("healthCheckNodePort is served by a socket, not by rules", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "tcp", 31692))));
        s.add(new Scenario("loadbalancer-ipmode-proxy", "ingress with ipMode Proxy or hostname only gets no elements",
                cluster().service(svc("demo", "proxied").type("LoadBalancer").clusterIP("172.30.232.109")
                                .port("http", "TCP", 80, 31951).lbIngress("203.0.113.11", null, "Proxy")
                                .lbIngress(null, "lb.example.com", null).lbIngress("203.0.113.12", null, "VIP").build())
                        .slice(slice("demo", "proxied", "s1").port("http", "TCP", 8080).ready("10.0.2.171", OTHER_NODE).build())
                        .snapshot(), node, flows(
                untouched("ipMode Proxy VIP gets no rules", EXTERNAL, EXTERNAL_CLIENT, "203.0.113.11", "tcp", 80),
                dnat("ipMode VIP is served", EXTERNAL, EXTERNAL_CLIENT, "203.0.113.12", "tcp", 80, "yes", "10.0.2.171:8080"))));
        s.add(new Scenario("session-affinity", "ClientIP affinity: endpoint chains and timeout sets",
                cluster().service(svc("demo", "hello-sticky").clusterIP("172.30.0.60").port("http", "TCP", 80).clientIPAffinity(600).build())
                        .slice(slice("demo", "hello-sticky", "s1").port("http", "TCP", 8080)
                                .ready("10.0.2.61", OTHER_NODE).ready("10.0.1.62", NODE).build())
                        .snapshot(), node, flows(
                dnat("first connection from a pod picks any endpoint", POD, POD_CLIENT, "172.30.0.60", "tcp", 80, "no",
                        "10.0.1.62:8080", "10.0.2.61:8080"),
                dnat("from off-node", EXTERNAL, EXTERNAL_CLIENT, "172.30.0.60", "tcp", 80, "yes", "10.0.1.62:8080", "10.0.2.61:8080"),
                dnat("hairpin through an endpoint chain", POD, "10.0.1.62", "172.30.0.60", "tcp", 80,
                        "10.0.1.62:8080=yes|10.0.2.61:8080=no", "10.0.1.62:8080", "10.0.2.61:8080"))));
        s.add(new Scenario("session-affinity-default-timeout", "ClientIP without a config: 10800 s as the API defaults",
                cluster().service(svc("demo", "sticky-default").type("NodePort").clusterIP("172.30.0.63").port("http", "TCP", 80, 30063)
                                .clientIPAffinity(null).externalLocal().build())
                        .slice(slice("demo", "sticky-default", "s1").port("http", "TCP", 8080)
                                .ready("10.0.2.64", OTHER_NODE).ready("10.0.1.65", NODE).build())
                        .snapshot(), node, flows(
                dnat("NodePort from off-node: the local endpoint chain", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "tcp", 30063, "no",
                        "10.0.1.65:8080"),
                dnat("NodePort from a pod: every endpoint chain", POD, POD_CLIENT, NODE_IP, "tcp", 30063, "no",
                        "10.0.1.65:8080", "10.0.2.64:8080"),
                dnat("ClusterIP from a pod", POD, POD_CLIENT, "172.30.0.63", "tcp", 80, "no", "10.0.1.65:8080", "10.0.2.64:8080"))));
        s.add(new Scenario("internal-local", "iTP=Local with a local endpoint: ClusterIP goes to the local chain",
                cluster().service(svc("demo", "hello-local").clusterIP("172.30.0.70").port("http", "TCP", 80).internalLocal().build())
                        .slice(slice("demo", "hello-local", "s1").port("http", "TCP", 8080)
                                .ready("10.0.2.71", OTHER_NODE).ready("10.0.1.72", NODE).build())
                        .snapshot(), node, flows(
                dnat("ClusterIP from a pod: local endpoint only", POD, POD_CLIENT, "172.30.0.70", "tcp", 80, "no", "10.0.1.72:8080"),
                dnat("ClusterIP from the host", HOST, NODE_IP, "172.30.0.70", "tcp", 80, "yes", "10.0.1.72:8080"),
                dnat("ClusterIP from off-node", EXTERNAL, EXTERNAL_CLIENT, "172.30.0.70", "tcp", 80, "yes", "10.0.1.72:8080"))));
        s.add(new Scenario("internal-local-remote-only", "iTP=Local, endpoints only elsewhere: ClusterIP dropped",
                cluster().service(svc("demo", "hello-local").clusterIP("172.30.0.70").port("http", "TCP", 80).internalLocal().build())
                        .slice(slice("demo", "hello-local", "s1").port("http", "TCP", 8080).ready("10.0.2.71", OTHER_NODE).build())
                        .snapshot(), node, flows(
                drop("ClusterIP from a pod", POD, POD_CLIENT, "172.30.0.70", "tcp", 80, "service-endpoints-check"),
                drop("ClusterIP from the host", HOST, NODE_IP, "172.30.0.70", "tcp", 80, "service-endpoints-check"))));
        s.add(new Scenario("terminating-fallback", "nothing ready: serving+terminating endpoints are used",
                cluster().service(svc("demo", "draining").clusterIP("172.30.0.80").port("http", "TCP", 80).build())
                        .slice(slice("demo", "draining", "s1").port("http", "TCP", 8080)
                                .endpoint("10.0.2.81", false, true, true, OTHER_NODE)
                                .endpoint("10.0.2.82", false, false, true, OTHER_NODE)
                                .endpoint("10.0.1.83", false, false, false, NODE).build())
                        .snapshot(), node, flows(
                dnat("only the serving terminating endpoint", POD, POD_CLIENT, "172.30.0.80", "tcp", 80, "no", "10.0.2.81:8080"))));
        s.add(new Scenario("not-ready-excluded", "ready endpoints win; not-ready and terminating ones are left out",
                cluster().service(svc("demo", "hello").clusterIP("172.30.101.118").port("http", "TCP", 80).build())
                        .slice(slice("demo", "hello", "s1").port("http", "TCP", 8080)
                                .ready("10.0.2.117", OTHER_NODE).ready("10.0.1.148", NODE)
                                .endpoint("10.0.2.120", false, false, false, OTHER_NODE)
                                .endpoint("10.0.2.118", false, true, true, OTHER_NODE)
                                .endpoint("10.0.2.119", null, null, null, OTHER_NODE).build())
                        .snapshot(), node, flows(
                dnat("ready endpoints, and one with no conditions (ready by default)", POD, POD_CLIENT, "172.30.101.118", "tcp", 80, "no",
                        "10.0.1.148:8080", "10.0.2.117:8080", "10.0.2.119:8080"))));
        s.add(new Scenario("topology-prefer-same-zone", "every ready endpoint hinted, one for our zone: zone-local endpoints only",
                cluster().service(svc("demo", "hello-zone").clusterIP("172.30.0.90").port("http", "TCP", 80).build())
                        .slice(slice("demo", "hello-zone", "s1").port("http", "TCP", 8080)
                                .hinted("10.0.2.91", OTHER_NODE, List.of("zone-a"), List.of())
                                .hinted("10.0.2.92", OTHER_NODE, List.of("zone-b"), List.of())
                                .hinted("10.0.1.93", NODE, List.of("zone-a"), List.of()).build())
                        .snapshot(), node, flows(
                dnat("zone-a endpoints only", POD, POD_CLIENT, "172.30.0.90", "tcp", 80, "no", "10.0.1.93:8080", "10.0.2.91:8080"))));
        s.add(new Scenario("topology-prefer-same-node", "PreferSameNode: node hints narrow to this node's endpoint",
                cluster().service(svc("demo", "hello-near").clusterIP("172.30.0.95").port("http", "TCP", 80).build())
                        .slice(slice("demo", "hello-near", "s1").port("http", "TCP", 8080)
                                .hinted("10.0.2.96", OTHER_NODE, List.of("zone-a"), List.of(OTHER_NODE))
                                .hinted("10.0.1.97", NODE, List.of("zone-a"), List.of(NODE)).build())
                        .snapshot(), node, flows(
                dnat("this node's endpoint only", POD, POD_CLIENT, "172.30.0.95", "tcp", 80, "no", "10.0.1.97:8080"),
                dnat("from off-node too", EXTERNAL, EXTERNAL_CLIENT, "172.30.0.95", "tcp", 80, "yes", "10.0.1.97:8080"))));
        s.add(new Scenario("topology-incomplete-hints", "one ready endpoint without hints: topology ignored",
                cluster().service(svc("demo", "hello-zone").clusterIP("172.30.0.90").port("http", "TCP", 80).build())
                        .slice(slice("demo", "hello-zone", "s1").port("http", "TCP", 8080)
                                .hinted("10.0.2.91", OTHER_NODE, List.of("zone-a"), List.of())
                                .ready("10.0.2.92", OTHER_NODE).build())
                        .snapshot(), node, flows(
                dnat("every endpoint", POD, POD_CLIENT, "172.30.0.90", "tcp", 80, "no", "10.0.2.91:8080", "10.0.2.92:8080"))));
        s.add(new Scenario("duplicate-endpoint-two-slices", "the same ip:port in two slices: counted once, ready copy wins",
                cluster().service(svc("demo", "moving").clusterIP("172.30.0.100").port("http", "TCP", 80).build())
                        .slice(slice("demo", "moving", "moving-a").port("http", "TCP", 8080)
                                .endpoint("10.0.1.101", false, true, true, OTHER_NODE).ready("10.0.2.102", OTHER_NODE).build())
                        .slice(slice("demo", "moving", "moving-b").port("http", "TCP", 8080).ready("10.0.1.101", NODE).build())
                        .snapshot(), node, flows(
                dnat("each address once", POD, POD_CLIENT, "172.30.0.100", "tcp", 80, "no", "10.0.1.101:8080", "10.0.2.102:8080"),
                dnat("the ready copy is local: hairpin", POD, "10.0.1.101", "172.30.0.100", "tcp", 80,
                        "10.0.1.101:8080=yes|10.0.2.102:8080=no", "10.0.1.101:8080", "10.0.2.102:8080"))));
        s.add(new Scenario("named-port-per-slice", "a named targetPort resolving to different numbers in two slices",
                cluster().service(svc("demo", "rolling").clusterIP("172.30.0.110").port("http", "TCP", 80).build())
                        .slice(slice("demo", "rolling", "old").port("http", "TCP", 8080).ready("10.0.2.111", OTHER_NODE).build())
                        .slice(slice("demo", "rolling", "new").port("http", "TCP", 9090).ready("10.0.2.112", OTHER_NODE).build())
                        .snapshot(), node, flows(
                dnat("each slice's port number", POD, POD_CLIENT, "172.30.0.110", "tcp", 80, "no", "10.0.2.111:8080", "10.0.2.112:9090"))));
        s.add(new Scenario("skipped-services", "headless, ExternalName and service-proxy-name/headless labels: nothing rendered",
                cluster().service(svc("demo", "hello-headless").clusterIP("None").port("http", "TCP", 80).build())
                        .service(svc("demo", "registry").type("ExternalName").port("http", "TCP", 80).build())
                        .service(svc("demo", "other-proxy").clusterIP("172.30.0.120").port("http", "TCP", 80)
                                .label("service.kubernetes.io/service-proxy-name", "cilium").build())
                        .service(svc("demo", "labelled-headless").clusterIP("172.30.0.121").port("http", "TCP", 80)
                                .label("service.kubernetes.io/headless", "").build())
                        .slice(slice("demo", "hello-headless", "s1").port("http", "TCP", 8080).ready("10.0.1.121", NODE).build())
                        .snapshot(), node, flows(
                untouched("service-proxy-name label: another proxy's service", POD, POD_CLIENT, "172.30.0.120", "tcp", 80),
                untouched("headless label", POD, POD_CLIENT, "172.30.0.121", "tcp", 80))));
        s.add(new Scenario("invalid-input-skipped", "a bad ClusterIP and a bad endpoint address are skipped with a reason; the rest renders",
                cluster().service(svc("demo", "bad-ip").clusterIP("300.1.2.3").port("http", "TCP", 80).build())
                        .service(svc("demo", "good").clusterIP("172.30.0.130").port("http", "TCP", 80).build())
                        .slice(slice("demo", "good", "s1").port("http", "TCP", 8080).ready("10.0.1.130", NODE)
                                .ready("10.0.1.999", NODE).build())
                        .snapshot(), node, flows(
                untouched("the skipped Service has no rules", POD, POD_CLIENT, "172.30.0.1", "tcp", 80))));
        s.add(new Scenario("dual-stack", "a dual-stack service: each table gets only its own family",
                cluster().service(svc("demo", "hello-dual").dualStack("172.30.100.10", "fd00:172:30::100a").type("NodePort")
                                .port("http", "TCP", 80, 30090).build())
                        .slice(slice("demo", "hello-dual", "v4").port("http", "TCP", 8080).ready("10.0.1.60", NODE).build())
                        .slice(slice6("demo", "hello-dual", "v6").port("http", "TCP", 8080).ready("fd00:10::1:3c", NODE)
                                .ready("fd00:10::2:3d", OTHER_NODE).build())
                        .serviceCidr("172.30.0.0/16", "fd00:172:30::/108")
                        .snapshot(), node, flows(
                dnat("IPv4 ClusterIP from a pod", POD, POD_CLIENT, "172.30.100.10", "tcp", 80, "no", "10.0.1.60:8080"),
                dnat("IPv6 ClusterIP from a pod", POD, POD_CLIENT6, "fd00:172:30::100a", "tcp", 80, "no",
                        "[fd00:10::1:3c]:8080", "[fd00:10::2:3d]:8080"),
                dnat("IPv6 NodePort from off-node", EXTERNAL, EXTERNAL_CLIENT6, NODE_IP6, "tcp", 30090, "yes",
                        "[fd00:10::1:3c]:8080", "[fd00:10::2:3d]:8080"),
                dnat("IPv4 NodePort from off-node", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "tcp", 30090, "yes", "10.0.1.60:8080"),
                drop("unallocated IPv4 address in the ServiceCIDR", POD, POD_CLIENT, "172.30.0.99", "tcp", 80, "cluster-ips-check"),
                drop("unallocated IPv6 address in the ServiceCIDR", POD, POD_CLIENT6, "fd00:172:30::99", "tcp", 80, "cluster-ips-check"))));
        s.add(new Scenario("ipv6-only", "a single-stack IPv6 service with affinity and an IPv6 endpoint chain",
                cluster().service(svc("testing", "service").clusterIP("fd00:172:30::50").port("http", "TCP", 80).clientIPAffinity(60).build())
                        .slice(slice6("testing", "service", "s1").port("http", "TCP", 80)
                                .ready("fd80:abcd:12::a1b2:c3d4:e5f6:9999", OTHER_NODE).build())
                        .snapshot(), node, flows(
                dnat("IPv6 ClusterIP with affinity from a pod", POD, POD_CLIENT6, "fd00:172:30::50", "tcp", 80, "no",
                        "[fd80:abcd:12:0:a1b2:c3d4:e5f6:9999]:80"),
                dnat("from off-node", EXTERNAL, EXTERNAL_CLIENT6, "fd00:172:30::50", "tcp", 80, "yes", "[fd80:abcd:12:0:a1b2:c3d4:e5f6:9999]:80"),
                reject("undefined port", POD, POD_CLIENT6, "fd00:172:30::50", "tcp", 81, "cluster-ips-check"))));
        s.add(new Scenario("masquerade-all", "masqueradeAll: every ClusterIP connection is marked",
                cluster().service(svc("ns1", "svc1").clusterIP("172.30.0.41").port("p80", "TCP", 80).build())
                        .slice(slice("ns1", "svc1", "s1").port("p80", "TCP", 80).ready("10.0.2.4", OTHER_NODE).build())
                        .snapshot(),
                with(node, n -> new NodeContext(n.nodeName(), n.zone(), n.nodeIPs(), n.clusterCidrs(), n.nodePortAddresses(),
                        n.localAddresses(), true, 14, true)), flows(
                dnat("ClusterIP from a pod is masqueraded", POD, POD_CLIENT, "172.30.0.41", "tcp", 80, "yes", "10.0.2.4:80"),
                dnat("ClusterIP from off-node", EXTERNAL, EXTERNAL_CLIENT, "172.30.0.41", "tcp", 80, "yes", "10.0.2.4:80"))));
        s.add(new Scenario("no-cluster-cidr", "no local-traffic detector: no off-cluster masquerade, no pod short-circuit",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080)
                                .externalLocal().build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080).ready("10.0.1.48", NODE).build())
                        .snapshot(),
                with(node, n -> new NodeContext(n.nodeName(), n.zone(), n.nodeIPs(), List.of(), n.nodePortAddresses(),
                        n.localAddresses(), false, 14, true)), flows(
                dnat("ClusterIP from off-node is not masqueraded", EXTERNAL, EXTERNAL_CLIENT, "172.30.48.156", "tcp", 80, "no", "10.0.1.48:8080"),
                dnat("ClusterIP from the host is not masqueraded", HOST, NODE_IP, "172.30.48.156", "tcp", 80, "no", "10.0.1.48:8080"),
                dnat("hairpin still masquerades", POD, "10.0.1.48", "172.30.48.156", "tcp", 80, "yes", "10.0.1.48:8080"),
                dnat("eTP=Local NodePort from a pod: no short-circuit, local chain", POD, POD_CLIENT, NODE_IP, "tcp", 30080, "no",
                        "10.0.1.48:8080"),
                dnat("eTP=Local NodePort from the host: masqueraded", HOST, NODE_IP, NODE_IP, "tcp", 30080, "yes", "10.0.1.48:8080"))));
        s.add(new Scenario("service-cidrs", "ServiceCIDRs known: unallocated ClusterIPs dropped in cluster-ips-check",
                cluster().service(svc("default", "kubernetes").clusterIP("172.30.0.1").port("https", "TCP", 443).build())
                        .slice(slice("default", "kubernetes", "kubernetes").port("https", "TCP", 6443).ready("192.168.10.17", null).build())
                        .serviceCidr("172.30.0.0/16", "fd00:172:30::/108").serviceCidr("172.31.0.0/24")
                        .snapshot(), node, flows(
                dnat("kubernetes from a pod", POD, POD_CLIENT, "172.30.0.1", "tcp", 443, "no", "192.168.10.17:6443"),
                dnat("kubernetes from the host", HOST, NODE_IP, "172.30.0.1", "tcp", 443, "yes", "192.168.10.17:6443"),
                reject("undefined port", POD, POD_CLIENT, "172.30.0.1", "tcp", 80, "cluster-ips-check"),
                drop("unallocated address in the first CIDR", POD, POD_CLIENT, "172.30.0.2", "tcp", 443, "cluster-ips-check"),
                drop("unallocated address in the second ServiceCIDR", HOST, NODE_IP, "172.31.0.5", "tcp", 443, "cluster-ips-check"),
                drop("unallocated IPv6 address", POD, POD_CLIENT6, "fd00:172:30::5", "tcp", 443, "cluster-ips-check"),
                untouched("an address outside every ServiceCIDR", POD, POD_CLIENT, "172.32.0.1", "tcp", 443))));
        s.add(new Scenario("custom-masquerade-bit", "masqueradeBit 5: mark 0x20 everywhere",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080).build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080).ready("10.0.2.150", OTHER_NODE).build())
                        .snapshot(),
                with(node, n -> new NodeContext(n.nodeName(), n.zone(), n.nodeIPs(), n.clusterCidrs(), n.nodePortAddresses(),
                        n.localAddresses(), false, 5, true)), flows(
                dnat("NodePort from off-node: masqueraded by mark 0x20", EXTERNAL, EXTERNAL_CLIENT, NODE_IP, "tcp", 30080, "yes", "10.0.2.150:8080"),
                dnat("ClusterIP from a pod", POD, POD_CLIENT, "172.30.48.156", "tcp", 80, "no", "10.0.2.150:8080"))));
        s.add(new Scenario("hairpin-shared-endpoint", "one local endpoint behind two services: one hairpin element",
                cluster().service(svc("demo", "a").clusterIP("172.30.0.130").port("http", "TCP", 80).build())
                        .service(svc("demo", "b").clusterIP("172.30.0.131").port("http", "TCP", 80).build())
                        .slice(slice("demo", "a", "a1").port("http", "TCP", 8080).ready("10.0.1.48", NODE).build())
                        .slice(slice("demo", "b", "b1").port("http", "TCP", 8080).ready("10.0.1.48", NODE).build())
                        .snapshot(), node, flows(
                dnat("the endpoint calls service a", POD, "10.0.1.48", "172.30.0.130", "tcp", 80, "yes", "10.0.1.48:8080"),
                dnat("the endpoint calls service b", POD, "10.0.1.48", "172.30.0.131", "tcp", 80, "yes", "10.0.1.48:8080"),
                dnat("another pod calls service a", POD, POD_CLIENT, "172.30.0.130", "tcp", 80, "no", "10.0.1.48:8080"))));
        s.add(new Scenario("no-node-ip", "a node with no known addresses: NodePorts match every local address",
                cluster().service(svc("demo", "hello-np").type("NodePort").clusterIP("172.30.48.156").port("http", "TCP", 80, 30080).build())
                        .slice(slice("demo", "hello-np", "s1").port("http", "TCP", 8080).ready("10.0.2.150", OTHER_NODE).build())
                        .snapshot(), NodeContext.minimal(NODE), flows(
                dnat("ClusterIP from off-node: no detector, no masquerade", EXTERNAL, EXTERNAL_CLIENT, "172.30.48.156", "tcp", 80, "no",
                        "10.0.2.150:8080"),
                untouched("NodePort on loopback is not served", HOST, "127.0.0.1", "127.0.0.1", "tcp", 30080))));
        return s;
    }

    /**
     * Cluster states that together exercise every rule form the renderer writes, for the tests that load rendered
     * tables into a real kernel and read them back (with {@link #all()}): no golden files and no flows of their own.
     * Add a scenario here and every such test covers it.
     */
    public static List<Scenario> kernelForms() {
        List<Scenario> out = new ArrayList<>();
        out.add(new Scenario("kernel-clusterip", "plain ClusterIP", kernelCluster()
                .with(svc("default", "web").clusterIP("172.30.0.10").port("http", "TCP", 80))
                .with(kernelSlice("default", "web").port("http", "TCP", 8080).ready("10.0.2.5", OTHER_NODE).ready("10.0.2.7", OTHER_NODE))
                .snapshot(), kernelNode(), List.of()));
        out.add(new Scenario("kernel-udp-sctp", "single endpoint, UDP and SCTP", kernelCluster()
                .with(svc("kube-system", "dns").clusterIP("172.30.0.53").port("dns", "UDP", 53).port("dns-sctp", "SCTP", 5353))
                .with(kernelSlice("kube-system", "dns").port("dns", "UDP", 53).port("dns-sctp", "SCTP", 5353).ready("10.0.1.9", NODE))
                .snapshot(), kernelNode(), List.of()));
        out.add(new Scenario("kernel-nodeport", "NodePort", kernelCluster()
                .with(svc("default", "np").clusterIP("172.30.0.20").nodePort("", "TCP", 80, 30080).nodePort("udp", "UDP", 81, 30081))
                .with(kernelSlice("default", "np").port("", "TCP", 8080).port("udp", "UDP", 8081).ready("10.0.1.5", NODE).ready("10.0.2.7", OTHER_NODE))
                .snapshot(), kernelNodeWithNodePortCidrs(), List.of()));
        out.add(new Scenario("kernel-loadbalancer-etp-local", "LoadBalancer with source ranges and eTP Local", kernelCluster()
                .with(svc("prod", "lb").clusterIP("172.30.0.30").nodePort("https", "TCP", 443, 31443)
                        .loadBalancer(LB_VIP, "192.0.2.128/25", EXTERNAL_CIDR, LAN_CIDR)
                        .externalIP("192.0.2.99").externalLocal().healthCheckNodePort(32000))
                .with(kernelSlice("prod", "lb").port("https", "TCP", 8443).ready("10.0.1.5", NODE).ready("10.0.2.7", OTHER_NODE))
                .snapshot(), kernelNodeWithNodePortCidrs(), List.of()));
        // 203.0.113.0/25 covers the VIP, the LAN covers the node (so the VIP is allowed again), and three
        // adjacent /24s: the kernel stores the anonymous set merged, as 10.0.0.0-10.0.2.255 and 203.0.113.0/25.
        out.add(new Scenario("kernel-merged-source-ranges", "source ranges the kernel merges", kernelCluster()
                .with(svc("prod", "lb-ranges").clusterIP("172.30.0.32").nodePort("", "TCP", 80, 31081)
                        .loadBalancer(LB_VIP, "203.0.113.0/25", LAN_CIDR, "10.0.1.0/24", "10.0.0.0/24", "10.0.2.0/24"))
                .with(kernelSlice("prod", "lb-ranges").port("", "TCP", 80).ready("10.0.2.7", OTHER_NODE))
                .snapshot(), kernelNode(), List.of()));
        out.add(new Scenario("kernel-etp-local-remote-only", "eTP Local without local endpoints", kernelCluster()
                .with(svc("prod", "lb-remote").clusterIP("172.30.0.31").nodePort("", "TCP", 80, 31080)
                        .loadBalancer("203.0.113.11").externalLocal().healthCheckNodePort(32001))
                .with(kernelSlice("prod", "lb-remote").port("", "TCP", 80).ready("10.0.2.7", OTHER_NODE))
                .snapshot(), kernelNode(), List.of()));
        out.add(new Scenario("kernel-session-affinity", "session affinity", kernelCluster()
                .with(svc("default", "sticky").clusterIP("172.30.0.40").nodePort("", "TCP", 80, 30040).clientIPAffinity(600))
                .with(kernelSlice("default", "sticky").port("", "TCP", 8080).ready("10.0.1.5", NODE).ready("10.0.2.7", OTHER_NODE))
                .snapshot(), kernelNode(), List.of()));
        out.add(new Scenario("kernel-itp-local", "iTP Local", kernelCluster()
                .with(svc("default", "local-only").clusterIP("172.30.0.50").port("", "TCP", 80).internalLocal())
                .with(svc("default", "local-none").clusterIP("172.30.0.51").port("", "TCP", 80).internalLocal())
                .with(kernelSlice("default", "local-only").port("", "TCP", 8080).ready("10.0.1.5", NODE).ready("10.0.2.7", OTHER_NODE))
                .with(kernelSlice("default", "local-none").port("", "TCP", 8080).ready("10.0.2.8", OTHER_NODE))
                .snapshot(), kernelNode(), List.of()));
        out.add(new Scenario("kernel-no-endpoints", "no endpoints", kernelCluster()
                .with(svc("default", "empty").clusterIP("172.30.0.60").nodePort("web", "TCP", 80, 30060).loadBalancer("203.0.113.60")
                        .externalIP("192.0.2.61"))
                .snapshot(), kernelNode(), List.of()));
        out.add(new Scenario("kernel-dual-stack", "dual-stack IPv6", kernelCluster()
                .with(svc("default", "ds").dualStack("172.30.0.70", "fd00:172:30::70").nodePort("", "TCP", 80, 30070))
                .with(svc("default", "ds-sticky").clusterIPs("fd00:172:30::71").families("IPv6").nodePort("", "UDP", 53, 30071)
                        .loadBalancer("2001:db8::71", "2001:db8:1::/48").clientIPAffinity(300))
                .with(kernelSlice("default", "ds").port("", "TCP", 8080).ready("10.0.1.5", NODE))
                .with(slice6("default", "ds", "ds-v6").port("", "TCP", 8080)
                        .ready("fd00:10::1:5", NODE).ready("fd00:10::2:7", OTHER_NODE))
                .with(slice6("default", "ds-sticky", "ds-sticky-abcde").port("", "UDP", 5353)
                        .ready("fd00:10::1:9", NODE).ready("fd00:10::2:9", OTHER_NODE))
                .snapshot(), kernelNodeDualStack(), List.of()));
        out.add(new Scenario("kernel-masquerade-all", "masqueradeAll", kernelCluster()
                .with(svc("default", "web").clusterIP("172.30.0.10").port("http", "TCP", 80))
                .with(kernelSlice("default", "web").port("http", "TCP", 8080).ready("10.0.1.5", NODE))
                .snapshot(),
                new NodeContext(NODE, null, List.of(ip(NODE_IP)), List.of(), List.of(), List.of(), true,
                        NodeContext.DEFAULT_MASQUERADE_BIT, true), List.of()));
        out.add(new Scenario("kernel-nodeport-match-all", "nodePortAddresses match-all", kernelCluster()
                .with(svc("default", "np").clusterIP("172.30.0.20").nodePort("", "TCP", 80, 30080))
                .with(kernelSlice("default", "np").port("", "TCP", 8080).ready("10.0.1.5", NODE))
                .snapshot(),
                new NodeContext(NODE, null, List.of(ip(NODE_IP)), List.of(cidr(CLUSTER_CIDR)),
                        List.of(cidr("0.0.0.0/0")), List.of(ip(NODE_IP), ip("127.0.0.1")), false,
                        NodeContext.DEFAULT_MASQUERADE_BIT, true), List.of()));
        return out;
    }

    /** The service CIDRs every scenario's cluster has. */
    private static TestClusters kernelCluster() { return cluster().serviceCidr(SERVICE_CIDR, SERVICE_CIDR6); }

    /** An IPv4 slice named as the EndpointSlice controller would ({@code SERVICE-abcde}). */
    private static TestClusters.Slice kernelSlice(String ns, String service) { return slice(ns, service, service + "-abcde"); }

    private static NodeContext kernelNode() {
        return new NodeContext(NODE, null, List.of(ip(NODE_IP)), List.of(cidr(CLUSTER_CIDR)), List.of(),
                List.of(ip(NODE_IP)), false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }

    private static NodeContext kernelNodeWithNodePortCidrs() {
        return new NodeContext(NODE, null, List.of(ip(NODE_IP)), List.of(cidr(CLUSTER_CIDR)),
                List.of(cidr(LAN_CIDR)), List.of(ip(NODE_IP), ip(OTHER_NODE_IP), ip(NODE_POD_GATEWAY)),
                false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }

    private static NodeContext kernelNodeDualStack() {
        return new NodeContext(NODE, null, List.of(ip(NODE_IP), ip(NODE_IP6)),
                List.of(cidr(CLUSTER_CIDR), cidr(CLUSTER_CIDR6)),
                List.of(cidr(LAN_CIDR), cidr(LAN6_CIDR)),
                List.of(ip(NODE_IP), ip(NODE_IP6), ip("::1")), false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }

    private static NodeContext with(NodeContext n, UnaryOperator<NodeContext> f) { return f.apply(n); }

    private static NodeContext detector(NodeContext n, LocalTraffic d) {
        return new NodeContext(n.nodeName(), n.zone(), n.nodeIPs(), n.clusterCidrs(), n.nodePortAddresses(), n.localAddresses(),
                n.masqueradeAll(), n.masqueradeBit(), n.preferSameNodeEnabled(), d);
    }

    private static List<Flow> flows(Flow... flows) { return List.of(flows); }

    private static Flow dnat(String what, Origin o, String src, String dst, String proto, int dport, String masquerade,
                             String... targets) {
        return new Flow(what, o, src, dst, protocol(proto), dport, Outcome.Kind.DNAT, List.of(targets), masquerade, null);
    }

    private static Flow reject(String what, Origin o, String src, String dst, String proto, int dport, String chain) {
        return new Flow(what, o, src, dst, protocol(proto), dport, Outcome.Kind.REJECT, List.of(), null, chain);
    }

    private static Flow drop(String what, Origin o, String src, String dst, String proto, int dport, String chain) {
        return new Flow(what, o, src, dst, protocol(proto), dport, Outcome.Kind.DROP, List.of(), null, chain);
    }

    /** No rule of the table changes the packet, and nothing masquerades it. */
    private static Flow untouched(String what, Origin o, String src, String dst, String proto, int dport) {
        return new Flow(what, o, src, dst, protocol(proto), dport, Outcome.Kind.UNTOUCHED, List.of(), "no", null);
    }

    private static Protocol protocol(String nftName) { return Protocol.valueOf(nftName.toUpperCase(Locale.ROOT)); }

    static IpAddress ip(String s) { return IpAddress.parse(s); }
}
