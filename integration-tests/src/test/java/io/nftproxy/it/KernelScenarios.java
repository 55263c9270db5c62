package io.nftproxy.it;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.proxy.NodeContext;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Cluster states that together exercise every rule form the renderer writes, for tests that load rendered tables
 * into a real kernel. Add a scenario here and every kernel test that iterates {@link #all()} covers it.
 */
public final class KernelScenarios {
    public static final String NODE = "node-a";
    public static final String OTHER_NODE = "node-b";

    /** One cluster state and the node it is rendered for; {@code ipv6} when the ip6 table must have content. */
    public record Scenario(String name, ClusterSnapshot snapshot, NodeContext node, boolean ipv6) {
        @Override public String toString() { return name; }
    }

    private KernelScenarios() {}

    public static List<Scenario> all() {
        List<Scenario> out = new ArrayList<>();
        out.add(new Scenario("plain ClusterIP", snapshot(List.of(
                svc("default", "web", "ClusterIP", "10.96.0.10").port("http", "TCP", 80, 0).build()),
                List.of(slice("default", "web", "IPv4", List.of(port("http", "TCP", 8080)),
                        ep("10.244.1.5", OTHER_NODE), ep("10.244.2.7", OTHER_NODE)))), node(), false));
        out.add(new Scenario("single endpoint, UDP and SCTP", snapshot(List.of(
                svc("kube-system", "dns", "ClusterIP", "10.96.0.53").port("dns", "UDP", 53, 0)
                        .port("dns-sctp", "SCTP", 5353, 0).build()),
                List.of(slice("kube-system", "dns", "IPv4", List.of(port("dns", "UDP", 53), port("dns-sctp", "SCTP", 5353)),
                        ep("10.244.1.9", NODE)))), node(), false));
        out.add(new Scenario("NodePort", snapshot(List.of(
                svc("default", "np", "NodePort", "10.96.0.20").port("", "TCP", 80, 30080).port("udp", "UDP", 81, 30081).build()),
                List.of(slice("default", "np", "IPv4", List.of(port("", "TCP", 8080), port("udp", "UDP", 8081)),
                        ep("10.244.1.5", NODE), ep("10.244.2.7", OTHER_NODE)))), nodeWithNodePortCidrs(), false));
        out.add(new Scenario("LoadBalancer with source ranges and eTP Local", snapshot(List.of(
                svc("prod", "lb", "LoadBalancer", "10.96.0.30").port("https", "TCP", 443, 31443)
                        .lb("192.0.2.10").sourceRanges("203.0.113.0/24", "198.51.100.0/24", "192.168.0.0/24")
                        .externalIPs("192.0.2.99").etpLocal(32000).build()),
                List.of(slice("prod", "lb", "IPv4", List.of(port("https", "TCP", 8443)),
                        ep("10.244.1.5", NODE), ep("10.244.2.7", OTHER_NODE)))), nodeWithNodePortCidrs(), false));
        // 192.0.2.0/25 covers the VIP, 192.168.0.0/24 covers the node (so the VIP is allowed again), and three
        // adjacent /24s: the kernel stores the anonymous set merged, as 10.0.0.0-10.0.2.255 and 192.0.2.0/25.
        out.add(new Scenario("source ranges the kernel merges", snapshot(List.of(
                svc("prod", "lb-ranges", "LoadBalancer", "10.96.0.32").port("", "TCP", 80, 31081)
                        .lb("192.0.2.10").sourceRanges("192.0.2.0/25", "192.168.0.0/24", "10.0.1.0/24", "10.0.0.0/24",
                                "10.0.2.0/24").build()),
                List.of(slice("prod", "lb-ranges", "IPv4", List.of(port("", "TCP", 80)), ep("10.244.2.7", OTHER_NODE)))),
                node(), false));
        out.add(new Scenario("eTP Local without local endpoints", snapshot(List.of(
                svc("prod", "lb-remote", "LoadBalancer", "10.96.0.31").port("", "TCP", 80, 31080)
                        .lb("192.0.2.11").etpLocal(32001).build()),
                List.of(slice("prod", "lb-remote", "IPv4", List.of(port("", "TCP", 80)), ep("10.244.2.7", OTHER_NODE)))),
                node(), false));
        out.add(new Scenario("session affinity", snapshot(List.of(
                svc("default", "sticky", "NodePort", "10.96.0.40").port("", "TCP", 80, 30040).affinity(600).build()),
                List.of(slice("default", "sticky", "IPv4", List.of(port("", "TCP", 8080)),
                        ep("10.244.1.5", NODE), ep("10.244.2.7", OTHER_NODE)))), node(), false));
        out.add(new Scenario("iTP Local", snapshot(List.of(
                svc("default", "local-only", "ClusterIP", "10.96.0.50").port("", "TCP", 80, 0).itpLocal().build(),
                svc("default", "local-none", "ClusterIP", "10.96.0.51").port("", "TCP", 80, 0).itpLocal().build()),
                List.of(slice("default", "local-only", "IPv4", List.of(port("", "TCP", 8080)),
                                ep("10.244.1.5", NODE), ep("10.244.2.7", OTHER_NODE)),
                        slice("default", "local-none", "IPv4", List.of(port("", "TCP", 8080)), ep("10.244.2.8", OTHER_NODE)))),
                node(), false));
        out.add(new Scenario("no endpoints", snapshot(List.of(
                svc("default", "empty", "LoadBalancer", "10.96.0.60").port("web", "TCP", 80, 30060).lb("192.0.2.60")
                        .externalIPs("192.0.2.61").build()),
                List.of()), node(), false));
        out.add(new Scenario("dual-stack IPv6", snapshot(List.of(
                svc("default", "ds", "NodePort", "10.96.0.70").clusterIPs("10.96.0.70", "fd00:10:96::70")
                        .families("IPv4", "IPv6").port("", "TCP", 80, 30070).build(),
                svc("default", "ds-sticky", "LoadBalancer", "fd00:10:96::71").families("IPv6")
                        .port("", "UDP", 53, 30071).lb("2001:db8::71").sourceRanges("2001:db8:1::/48").affinity(300).build()),
                List.of(slice("default", "ds", "IPv4", List.of(port("", "TCP", 8080)), ep("10.244.1.5", NODE)),
                        slice("default", "ds-v6", "ds", "IPv6", List.of(port("", "TCP", 8080)),
                                ep("fd00:10:244:1::5", NODE), ep("fd00:10:244:2::7", OTHER_NODE)),
                        slice("default", "ds-sticky", "IPv6", List.of(port("", "UDP", 5353)),
                                ep("fd00:10:244:1::9", NODE), ep("fd00:10:244:2::9", OTHER_NODE)))),
                nodeDualStack(), true));
        out.add(new Scenario("masqueradeAll", snapshot(List.of(
                svc("default", "web", "ClusterIP", "10.96.0.10").port("http", "TCP", 80, 0).build()),
                List.of(slice("default", "web", "IPv4", List.of(port("http", "TCP", 8080)), ep("10.244.1.5", NODE)))),
                new NodeContext(NODE, null, List.of(ip("192.168.0.10")), List.of(), List.of(), List.of(), true,
                        NodeContext.DEFAULT_MASQUERADE_BIT, true), false));
        out.add(new Scenario("nodePortAddresses match-all", snapshot(List.of(
                svc("default", "np", "NodePort", "10.96.0.20").port("", "TCP", 80, 30080).build()),
                List.of(slice("default", "np", "IPv4", List.of(port("", "TCP", 8080)), ep("10.244.1.5", NODE)))),
                new NodeContext(NODE, null, List.of(ip("192.168.0.10")), List.of(cidr("10.244.0.0/16")),
                        List.of(cidr("0.0.0.0/0")), List.of(ip("192.168.0.10"), ip("127.0.0.1")), false,
                        NodeContext.DEFAULT_MASQUERADE_BIT, true), false));
        return out;
    }

    // ---- node contexts ----

    static NodeContext node() {
        return new NodeContext(NODE, null, List.of(ip("192.168.0.10")), List.of(cidr("10.244.0.0/16")), List.of(),
                List.of(ip("192.168.0.10")), false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }

    static NodeContext nodeWithNodePortCidrs() {
        return new NodeContext(NODE, null, List.of(ip("192.168.0.10")), List.of(cidr("10.244.0.0/16")),
                List.of(cidr("192.168.0.0/24")), List.of(ip("192.168.0.10"), ip("192.168.0.11"), ip("10.0.0.1")),
                false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }

    static NodeContext nodeDualStack() {
        return new NodeContext(NODE, null, List.of(ip("192.168.0.10"), ip("2001:db8::10")),
                List.of(cidr("10.244.0.0/16"), cidr("fd00:10:244::/56")),
                List.of(cidr("192.168.0.0/24"), cidr("2001:db8::/64")),
                List.of(ip("192.168.0.10"), ip("2001:db8::10"), ip("::1")), false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }

    // ---- object builders ----

    static ClusterSnapshot snapshot(List<ServiceObject> services, List<EndpointSliceObject> slices) {
        return new ClusterSnapshot(services, slices, List.of(),
                List.of(new ServiceCidrObject(ObjectMeta.of(null, "kubernetes"), List.of("10.96.0.0/16", "fd00:10:96::/108"))));
    }

    static IpAddress ip(String s) { return IpAddress.parse(s); }

    static IpPrefix cidr(String s) { return IpPrefix.parse(s); }

    static EndpointSliceObject.PortSpec port(String name, String proto, int port) {
        return new EndpointSliceObject.PortSpec(name, proto, port);
    }

    static EndpointSliceObject.Endpoint ep(String address, String nodeName) {
        return new EndpointSliceObject.Endpoint(List.of(address), true, true, false, nodeName, null, List.of(), List.of());
    }

    static EndpointSliceObject slice(String ns, String service, String family, List<EndpointSliceObject.PortSpec> ports,
                                     EndpointSliceObject.Endpoint... eps) {
        return slice(ns, service + "-abcde", service, family, ports, eps);
    }

    static EndpointSliceObject slice(String ns, String name, String service, String family,
                                     List<EndpointSliceObject.PortSpec> ports, EndpointSliceObject.Endpoint... eps) {
        ObjectMeta meta = new ObjectMeta(ns, name, Map.of(EndpointSliceObject.SERVICE_NAME_LABEL, service), Map.of(), false);
        return new EndpointSliceObject(meta, family, ports, List.of(eps));
    }

    static ServiceBuilder svc(String ns, String name, String type, String clusterIP) {
        return new ServiceBuilder(ns, name, type, clusterIP);
    }

    /** A terse way to write a v1 Service in test code. */
    static final class ServiceBuilder {
        private final String ns, name, type;
        private List<String> clusterIPs;
        private List<String> families = List.of();
        private final List<ServiceObject.PortSpec> ports = new ArrayList<>();
        private List<String> externalIPs = List.of();
        private final List<ServiceObject.LoadBalancerIngress> lb = new ArrayList<>();
        private List<String> sourceRanges = List.of();
        private String affinity;
        private Integer affinityTimeout;
        private String etp, itp;
        private Integer hcnp;

        ServiceBuilder(String ns, String name, String type, String clusterIP) {
            this.ns = ns;
            this.name = name;
            this.type = type;
            this.clusterIPs = List.of(clusterIP);
        }

        ServiceBuilder clusterIPs(String... ips) { clusterIPs = List.of(ips); return this; }
        ServiceBuilder families(String... f) { families = List.of(f); return this; }
        ServiceBuilder port(String portName, String proto, int port, int nodePort) {
            ports.add(new ServiceObject.PortSpec(portName, proto, port, null, nodePort == 0 ? null : nodePort));
            return this;
        }
        ServiceBuilder externalIPs(String... ips) { externalIPs = List.of(ips); return this; }
        ServiceBuilder lb(String ip) { lb.add(new ServiceObject.LoadBalancerIngress(ip, null, null)); return this; }
        ServiceBuilder sourceRanges(String... r) { sourceRanges = List.of(r); return this; }
        ServiceBuilder affinity(int timeout) { affinity = "ClientIP"; affinityTimeout = timeout; return this; }
        ServiceBuilder etpLocal(int healthCheckNodePort) { etp = "Local"; hcnp = healthCheckNodePort; return this; }
        ServiceBuilder itpLocal() { itp = "Local"; return this; }

        ServiceObject build() {
            return new ServiceObject(ObjectMeta.of(ns, name), type, clusterIPs.get(0), clusterIPs, families, ports,
                    externalIPs, lb, sourceRanges, affinity, affinityTimeout, etp, itp, hcnp, null);
        }
    }
}
