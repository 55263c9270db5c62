package io.nftproxy;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.NodeContext;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.nftproxy.TestAddresses.CLUSTER_CIDR;
import static io.nftproxy.TestAddresses.CLUSTER_CIDR6;
import static io.nftproxy.TestAddresses.NODE_IP;
import static io.nftproxy.TestAddresses.NODE_IP6;
import static io.nftproxy.TestAddresses.ZONE;
import static io.nftproxy.TestAddresses.cidr;
import static io.nftproxy.TestAddresses.ip;

/** Builds cluster snapshots for tests in a few lines, on {@link TestAddresses}' plan. */
public final class TestClusters {
    public static final String NODE = TestAddresses.NODE;
    public static final String OTHER_NODE = TestAddresses.OTHER_NODE;

    private final List<ServiceObject> services = new ArrayList<>();
    private final List<EndpointSliceObject> slices = new ArrayList<>();
    private final List<NodeObject> nodes = new ArrayList<>();
    private final List<ServiceCidrObject> cidrs = new ArrayList<>();

    public static TestClusters cluster() { return new TestClusters(); }

    public ClusterSnapshot snapshot() { return new ClusterSnapshot(services, slices, nodes, cidrs); }

    public TestClusters service(ServiceObject s) { services.add(s); return this; }
    public TestClusters slice(EndpointSliceObject s) { slices.add(s); return this; }
    public TestClusters node(NodeObject n) { nodes.add(n); return this; }
    public TestClusters with(Svc s) { return service(s.build()); }
    public TestClusters with(Slice s) { return slice(s.build()); }

    public TestClusters serviceCidr(String... c) {
        cidrs.add(new ServiceCidrObject(ObjectMeta.of(null, "kubernetes"), List.of(c)));
        return this;
    }

    /** The node context most tests use: cluster CIDR set, nodePortAddresses = the node IP. */
    public static NodeContext node() {
        IpAddress v4 = ip(NODE_IP), v6 = ip(NODE_IP6);
        return new NodeContext(NODE, ZONE, List.of(v4, v6), List.of(cidr(CLUSTER_CIDR), cidr(CLUSTER_CIDR6)),
                List.of(IpPrefix.host(v4), IpPrefix.host(v6)), List.of(v4, v6), false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }

    public static Svc svc(String ns, String name) { return new Svc(ns, name); }

    public static Slice slice(String ns, String service, String name) { return new Slice(ns, service, name, "IPv4"); }

    public static Slice slice6(String ns, String service, String name) { return new Slice(ns, service, name, "IPv6"); }

    /** Fluent Service builder; defaults to type ClusterIP. */
    public static final class Svc {
        private final String ns, name;
        private String type = "ClusterIP";
        private String clusterIP;
        private final List<String> clusterIPs = new ArrayList<>();
        private final List<String> families = new ArrayList<>();
        private final List<ServiceObject.PortSpec> ports = new ArrayList<>();
        private final List<String> externalIPs = new ArrayList<>();
        private final List<ServiceObject.LoadBalancerIngress> ingress = new ArrayList<>();
        private final List<String> ranges = new ArrayList<>();
        private String affinity;
        private Integer affinityTimeout;
        private String etp, itp;
        private Integer hcnp;
        private String created;
        private final Map<String, String> labels = new HashMap<>();

        Svc(String ns, String name) { this.ns = ns; this.name = name; }

        public Svc type(String t) { type = t; return this; }
        public Svc clusterIP(String ip) { clusterIP = ip; return this; }
        public Svc dualStack(String v4, String v6) {
            clusterIP = v4;
            clusterIPs.addAll(List.of(v4, v6));
            families.addAll(List.of("IPv4", "IPv6"));
            return this;
        }
        public Svc port(String pname, String proto, int port) { return port(pname, proto, port, null); }
        public Svc port(String pname, String proto, int port, Integer nodePort) {
            ports.add(new ServiceObject.PortSpec(pname, proto, port, null, nodePort));
            return this;
        }
        /** A NodePort service port; the type becomes NodePort unless it is already LoadBalancer. */
        public Svc nodePort(String pname, String proto, int port, int nodePort) {
            if (!"LoadBalancer".equals(type)) type = "NodePort";
            return port(pname, proto, port, nodePort);
        }
        /** Type LoadBalancer with one ingress VIP and the loadBalancerSourceRanges given. */
        public Svc loadBalancer(String vip, String... sourceRanges) {
            type = "LoadBalancer";
            lbIngress(vip);
            ranges.addAll(List.of(sourceRanges));
            return this;
        }
        /** clusterIPs as given (the first is also clusterIP), for single-stack IPv6 or an explicit family list. */
        public Svc clusterIPs(String... ips) {
            clusterIP = ips[0];
            clusterIPs.clear();
            clusterIPs.addAll(List.of(ips));
            return this;
        }
        public Svc families(String... f) { families.clear(); families.addAll(List.of(f)); return this; }
        public Svc sourceRanges(String... r) { ranges.addAll(List.of(r)); return this; }
        public Svc rawPort(ServiceObject.PortSpec p) { ports.add(p); return this; }
        public Svc externalIP(String ip) { externalIPs.add(ip); return this; }
        public Svc lbIngress(String ip) { ingress.add(new ServiceObject.LoadBalancerIngress(ip, null, null)); return this; }
        public Svc lbIngress(String ip, String hostname, String ipMode) {
            ingress.add(new ServiceObject.LoadBalancerIngress(ip, hostname, ipMode));
            return this;
        }
        public Svc sourceRange(String r) { ranges.add(r); return this; }
        public Svc clientIPAffinity(Integer timeout) { affinity = "ClientIP"; affinityTimeout = timeout; return this; }
        public Svc externalLocal() { etp = "Local"; return this; }
        public Svc externalPolicy(String p) { etp = p; return this; }
        public Svc internalLocal() { itp = "Local"; return this; }
        public Svc healthCheckNodePort(int p) { hcnp = p; return this; }
        public Svc label(String k, String v) { labels.put(k, v); return this; }
        public Svc created(String rfc3339) { created = rfc3339; return this; }

        public ServiceObject build() {
            return new ServiceObject(new ObjectMeta(ns, name, labels, Map.of(), false, created), type, clusterIP, clusterIPs,
                    families, ports, externalIPs, ingress, ranges, affinity, affinityTimeout, etp, itp, hcnp, null);
        }
    }

    /** Fluent EndpointSlice builder. */
    public static final class Slice {
        private final String ns, service, name, addressType;
        private final List<EndpointSliceObject.PortSpec> ports = new ArrayList<>();
        private final List<EndpointSliceObject.Endpoint> endpoints = new ArrayList<>();
        private final Map<String, String> labels = new HashMap<>();

        Slice(String ns, String service, String name, String addressType) {
            this.ns = ns;
            this.service = service;
            this.name = name;
            this.addressType = addressType;
            if (service != null) labels.put(EndpointSliceObject.SERVICE_NAME_LABEL, service);
        }

        public Slice port(String pname, String proto, Integer port) {
            ports.add(new EndpointSliceObject.PortSpec(pname, proto, port));
            return this;
        }
        /** A ready endpoint on the given node. */
        public Slice ready(String ip, String node) { return endpoint(ip, true, true, false, node); }
        public Slice endpoint(String ip, Boolean ready, Boolean serving, Boolean terminating, String node) {
            endpoints.add(new EndpointSliceObject.Endpoint(List.of(ip), ready, serving, terminating, node, null, List.of(), List.of()));
            return this;
        }
        public Slice hinted(String ip, String node, List<String> zones, List<String> nodeHints) {
            endpoints.add(new EndpointSliceObject.Endpoint(List.of(ip), true, true, false, node, null, zones, nodeHints));
            return this;
        }
        public Slice label(String k, String v) { labels.put(k, v); return this; }

        public EndpointSliceObject build() {
            return new EndpointSliceObject(new ObjectMeta(ns, name, labels, Map.of(), false), addressType, ports, endpoints);
        }
    }
}
