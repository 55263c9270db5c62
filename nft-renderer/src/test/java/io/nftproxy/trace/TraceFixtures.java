package io.nftproxy.trace;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
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
 * Fluent builders for the raw API records the tracer tests render, and the address plan they share:
 * <pre>
 *   this node  node-a  192.168.0.10      fd00:192:168::10   (pods 10.0.1.0/24, fd00:10::1:0/112)
 *   other node node-b  192.168.0.11                         (pods 10.0.2.0/24, fd00:10::2:0/112)
 *   cluster CIDR 10.0.0.0/8, fd00:10::/64; service CIDR 172.30.0.0/16, fd00:172:30::/112
 *   external clients 203.0.113.0/24, 198.18.0.0/15, 2001:db8::/32; externalIPs and LB VIPs 198.51.100.0/24
 * </pre>
 */
final class TraceFixtures {
    static final String NODE = "node-a";
    static final String OTHER_NODE = "node-b";
    static final String NODE_IP = "192.168.0.10";
    static final String NODE_IP6 = "fd00:192:168::10";

    private TraceFixtures() {}

    /** node-a with a ClusterCIDR local-traffic detector and NodePorts on 192.168.0.0/24 and fd00:192:168::/64. */
    static NodeContext node() { return node(false); }

    static NodeContext node(boolean masqueradeAll) {
        return node(masqueradeAll, List.of(IpPrefix.parse("192.168.0.0/24"), IpPrefix.parse("fd00:192:168::/64")));
    }

    /** node-a with no nodePortAddresses: NodePorts on every local address but loopback (upstream's MatchAll). */
    static NodeContext nodeMatchAll() { return node(false, List.of()); }

    private static NodeContext node(boolean masqueradeAll, List<IpPrefix> nodePortAddresses) {
        return node(masqueradeAll, nodePortAddresses, List.of(IpPrefix.parse("10.0.0.0/8"), IpPrefix.parse("fd00:10::/64")));
    }

    /** node-a without a cluster CIDR: no local-traffic detector, so no "from outside cluster" masquerade. */
    static NodeContext nodeWithoutDetector() {
        return node(false, List.of(IpPrefix.parse("192.168.0.0/24"), IpPrefix.parse("fd00:192:168::/64")), List.of());
    }

    private static NodeContext node(boolean masqueradeAll, List<IpPrefix> nodePortAddresses, List<IpPrefix> clusterCidrs) {
        return new NodeContext(NODE, "zone-a",
                List.of(IpAddress.parse(NODE_IP), IpAddress.parse(NODE_IP6)),
                clusterCidrs,
                nodePortAddresses,
                List.of(IpAddress.parse(NODE_IP), IpAddress.parse(NODE_IP6), IpAddress.parse("127.0.0.1"),
                        IpAddress.parse("::1")),
                masqueradeAll, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }

    static ServiceBuilder service(String namespace, String name) { return new ServiceBuilder(namespace, name); }

    static SliceBuilder slice(String namespace, String service) { return new SliceBuilder(namespace, service); }

    static ClusterBuilder cluster() { return new ClusterBuilder(); }

    static final class ServiceBuilder {
        private final String namespace;
        private final String name;
        private String type = "ClusterIP";
        private String clusterIP;
        private String family = "IPv4";
        private final List<ServiceObject.PortSpec> ports = new ArrayList<>();
        private final List<String> externalIPs = new ArrayList<>();
        private final List<ServiceObject.LoadBalancerIngress> ingress = new ArrayList<>();
        private final List<String> sourceRanges = new ArrayList<>();
        private String affinity = "None";
        private Integer affinityTimeout;
        private String etp = "Cluster";
        private String itp = "Cluster";

        private ServiceBuilder(String namespace, String name) {
            this.namespace = namespace;
            this.name = name;
        }

        ServiceBuilder clusterIP(String ip) {
            this.clusterIP = ip;
            this.family = ip.contains(":") ? "IPv6" : "IPv4";
            return this;
        }

        ServiceBuilder port(String portName, String protocol, int port) {
            ports.add(new ServiceObject.PortSpec(portName, protocol, port, null, null));
            return this;
        }

        /** A NodePort service port; the type becomes NodePort unless it is already LoadBalancer. */
        ServiceBuilder nodePort(String portName, String protocol, int port, int nodePort) {
            if (!"LoadBalancer".equals(type)) type = "NodePort";
            ports.add(new ServiceObject.PortSpec(portName, protocol, port, null, nodePort));
            return this;
        }

        ServiceBuilder externalIP(String ip) {
            externalIPs.add(ip);
            return this;
        }

        ServiceBuilder loadBalancer(String vip, String... sourceRanges) {
            type = "LoadBalancer";
            ingress.add(new ServiceObject.LoadBalancerIngress(vip, null, null));
            this.sourceRanges.addAll(List.of(sourceRanges));
            return this;
        }

        ServiceBuilder clientIPAffinity(int timeoutSeconds) {
            affinity = "ClientIP";
            affinityTimeout = timeoutSeconds;
            return this;
        }

        ServiceBuilder externalTrafficPolicyLocal() {
            etp = "Local";
            return this;
        }

        ServiceBuilder internalTrafficPolicyLocal() {
            itp = "Local";
            return this;
        }

        ServiceObject build() {
            return new ServiceObject(ObjectMeta.of(namespace, name), type, clusterIP, List.of(clusterIP), List.of(family),
                    ports, externalIPs, ingress, sourceRanges, affinity, affinityTimeout, etp, itp, null, null);
        }
    }

    static final class SliceBuilder {
        private final String namespace;
        private final String service;
        private String addressType = "IPv4";
        private final List<EndpointSliceObject.PortSpec> ports = new ArrayList<>();
        private final List<EndpointSliceObject.Endpoint> endpoints = new ArrayList<>();

        private SliceBuilder(String namespace, String service) {
            this.namespace = namespace;
            this.service = service;
        }

        SliceBuilder port(String portName, String protocol, int port) {
            ports.add(new EndpointSliceObject.PortSpec(portName, protocol, port));
            return this;
        }

        /** A ready endpoint on the given node; the slice's family follows the address. */
        SliceBuilder endpoint(String ip, String nodeName) {
            if (ip.contains(":")) addressType = "IPv6";
            endpoints.add(new EndpointSliceObject.Endpoint(List.of(ip), true, true, false, nodeName, null, List.of(), List.of()));
            return this;
        }

        EndpointSliceObject build() {
            ObjectMeta meta = new ObjectMeta(namespace, service + "-" + addressType.toLowerCase(),
                    Map.of(EndpointSliceObject.SERVICE_NAME_LABEL, service), Map.of(), false);
            return new EndpointSliceObject(meta, addressType, ports, endpoints);
        }
    }

    static final class ClusterBuilder {
        private final List<ServiceObject> services = new ArrayList<>();
        private final List<EndpointSliceObject> slices = new ArrayList<>();
        private final List<String> serviceCidrs = new ArrayList<>();

        ClusterBuilder with(ServiceBuilder s) {
            services.add(s.build());
            return this;
        }

        ClusterBuilder with(SliceBuilder s) {
            slices.add(s.build());
            return this;
        }

        ClusterBuilder serviceCidrs(String... cidrs) {
            serviceCidrs.addAll(List.of(cidrs));
            return this;
        }

        ClusterSnapshot build() {
            List<ServiceCidrObject> cidrs = serviceCidrs.isEmpty() ? List.of()
                    : List.of(new ServiceCidrObject(ObjectMeta.of(null, "kubernetes"), serviceCidrs));
            return new ClusterSnapshot(services, slices, List.of(), cidrs);
        }
    }
}
