package io.nftproxy.random;

import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.net.IpFamily;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Random clusters that use every feature the proxy has, from a seed: the same seed and size always give the same
 * cluster. Every object is one the API server accepts (names, ClusterIPs inside {@link #SERVICE_CIDR4} /
 * {@link #SERVICE_CIDR6}, unique node ports in 30000-32767, fields only where their type allows them), because
 * the differential harness posts them to a real API server; addresses come from private and documentation
 * ranges only.
 *
 * <p>Features: Service types ClusterIP, NodePort, LoadBalancer (VIPs with ipMode VIP, Proxy or unset, hostname-only
 * ingress, none, allocateLoadBalancerNodePorts false), headless and ExternalName; externalIPs (also of the other
 * family); loadBalancerSourceRanges; ClientIP affinity with and without a timeout; internal and external Local
 * policies with healthCheckNodePort; trafficDistribution with zone and node hints; one to five ports, named and
 * unnamed, TCP, UDP and SCTP, the same number on two protocols; single-stack IPv4 and IPv6 and dual-stack in
 * either order; the service-proxy-name label; no slice, empty slices, several slices, an endpoint in two slices;
 * endpoints ready, not ready, serving-terminating, terminating, with unset conditions, on this node, on others and
 * on none; slices missing a port; 13-20 endpoints (around the flat layout's 16) and 40. The node: IPv4, IPv6 or
 * dual-stack, nodePortAddresses default, a CIDR or everything, a second (ExternalIP) address, masqueradeAll, every
 * detect-local mode, with and without cluster CIDRs.
 */
public final class ClusterGenerator {
    public static final String SERVICE_CIDR4 = "172.30.0.0/16";
    public static final String SERVICE_CIDR6 = "fd00:172:30::/108";
    public static final String NODE = "node-a";
    public static final String ZONE = "zone-a";
    public static final List<String> OTHER_NODES = List.of("node-b", "node-c");
    public static final List<String> ZONES = List.of("zone-a", "zone-b");
    /** External clients: inside the source range every generated LoadBalancer with ranges allows, and outside. */
    public static final String ALLOWED_CLIENT4 = "198.51.100.10", DENIED_CLIENT4 = "198.51.100.200";
    public static final String ALLOWED_CLIENT6 = "2001:db8::7", DENIED_CLIENT6 = "2001:db8:3::9";
    /** Local pods (on {@link #NODE}) are in these; other nodes' pods in the next /24 (/112) up. */
    static final String POD_CIDR4 = "10.0.1.0/24", POD_CIDR6 = "fd00:10::1:0/112";
    static final String LABEL_PROXY_NAME = "service.kubernetes.io/service-proxy-name";
    static final String LABEL_HEADLESS = "service.kubernetes.io/headless";
    static final int NODE_PORT_MIN = 30000, NODE_PORT_MAX = 32767;

    private final Random rnd;
    private final long seed;
    private final NodeSettings node;
    private final Set<Integer> nodePorts = new HashSet<>();
    private int nextNodePort = NODE_PORT_MIN;
    private int externalIPs, vips;
    /** External and load-balancer IPs handed out so far, with the port/protocol pairs that use each. */
    private final Map<String, Set<String>> sharedAddresses = new LinkedHashMap<>();

    private ClusterGenerator(long seed) {
        this.seed = seed;
        this.rnd = new Random(seed);
        this.node = node();
    }

    /** A cluster of {@code services} Services (of every kind, headless and ExternalName included). */
    public static RandomCluster generate(long seed, int services) {
        return new ClusterGenerator(seed).cluster(services);
    }

    /** A cluster whose size, 1 to {@code maxServices}, comes from the seed too: small ones most often. */
    public static RandomCluster generate(long seed) {
        return generate(seed, sizeFor(seed, 40));
    }

    static int sizeFor(long seed, int max) {
        Random r = new Random(seed ^ 0x5DEECE66DL);
        return r.nextInt(4) == 0 ? 1 + r.nextInt(max) : 1 + r.nextInt(Math.min(8, max));
    }

    /** The ServiceCIDR object the API server makes from its service-cluster-ip-range, for the node's families. */
    static ServiceCidrObject serviceCidr(NodeSettings node) {
        List<String> cidrs = node.families().stream().map(f -> f == IpFamily.IPV4 ? SERVICE_CIDR4 : SERVICE_CIDR6).toList();
        return new ServiceCidrObject(ObjectMeta.of(null, "kubernetes"), cidrs);
    }

    private RandomCluster cluster(int count) {
        List<ServiceObject> services = new ArrayList<>();
        List<EndpointSliceObject> slices = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ServiceObject s = service(i);
            services.add(s);
            slices.addAll(slices(s, i));
        }
        return new RandomCluster(seed, services, slices, node);
    }

    private NodeSettings node() {
        List<IpFamily> families = switch (rnd.nextInt(20)) {
            case 0, 1, 2 -> List.of(IpFamily.IPV6);
            case 3, 4, 5, 6, 7 -> List.of(IpFamily.IPV4, IpFamily.IPV6);
            case 8, 9 -> List.of(IpFamily.IPV6, IpFamily.IPV4);
            default -> List.of(IpFamily.IPV4);
        };
        List<String> ips = families.stream().map(f -> f == IpFamily.IPV4 ? "192.168.10.20" : "fd00:192:168:10::20").toList();
        List<String> pods = families.stream().map(f -> f == IpFamily.IPV4 ? POD_CIDR4 : POD_CIDR6).toList();
        List<String> cluster = rnd.nextInt(10) == 0 ? List.of()
                : families.stream().map(f -> f == IpFamily.IPV4 ? "10.0.0.0/16" : "fd00:10::/96").toList();
        List<String> second = List.of(), npa = List.of();
        switch (rnd.nextInt(8)) {
            case 0 -> npa = List.of("primary");
            case 1 -> npa = families.stream().map(f -> f == IpFamily.IPV4 ? "192.168.10.0/24" : "fd00:192:168:10::/64").toList();
            case 2 -> npa = families.stream().map(f -> f == IpFamily.IPV4 ? "0.0.0.0/0" : "::/0").toList();
            case 3 -> {
                // A second address that accepts NodePorts only when nodePortAddresses reach it.
                second = families.stream().map(f -> f == IpFamily.IPV4 ? "192.168.20.20" : "fd00:192:168:20::20").toList();
                npa = rnd.nextBoolean() ? List.of("192.168.0.0/16", "fd00:192:168::/48").stream()
                        .filter(c -> families.contains(c.contains(":") ? IpFamily.IPV6 : IpFamily.IPV4)).toList() : List.of();
            }
            default -> { }
        }
        String mode;
        String name = "";
        switch (rnd.nextInt(10)) {
            case 0, 1 -> mode = NodeSettings.NODE_CIDR;
            case 2 -> {
                mode = NodeSettings.BRIDGE_INTERFACE;
                name = "cbr0";
            }
            case 3 -> {
                mode = NodeSettings.INTERFACE_NAME_PREFIX;
                name = "veth";
            }
            default -> mode = NodeSettings.CLUSTER_CIDR;
        }
        return new NodeSettings(NODE, ZONE, families, ips, second, pods, cluster, npa, rnd.nextInt(7) == 0, mode, name);
    }

    private enum Kind { CLUSTER_IP, NODE_PORT, LOAD_BALANCER, HEADLESS, EXTERNAL_NAME }

    private ServiceObject service(int i) {
        Kind kind = weighted(Map.of(Kind.CLUSTER_IP, 36, Kind.NODE_PORT, 22, Kind.LOAD_BALANCER, 27, Kind.HEADLESS, 8,
                Kind.EXTERNAL_NAME, 7));
        String ns = "ns" + rnd.nextInt(4);
        String name = "svc" + i;
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("app", name);
        if (rnd.nextInt(25) == 0) labels.put(LABEL_PROXY_NAME, "other-proxy");
        if (kind == Kind.HEADLESS) labels.put(LABEL_HEADLESS, "");
        String created = rnd.nextBoolean() ? null : "2026-0" + (1 + rnd.nextInt(9)) + "-1" + rnd.nextInt(10) + "T00:00:00Z";
        ObjectMeta meta = new ObjectMeta(ns, name, labels, Map.of(), false, created);
        List<ServiceObject.PortSpec> ports = ports(kind);
        if (kind == Kind.EXTERNAL_NAME) {
            return new ServiceObject(meta, "ExternalName", null, List.of(), List.of(), ports, List.of(), List.of(),
                    List.of(), null, null, null, null, null, null);
        }
        List<IpFamily> fams = serviceFamilies();
        List<String> clusterIPs = kind == Kind.HEADLESS ? List.of("None")
                : fams.stream().map(f -> clusterIP(f, i)).toList();
        String type = switch (kind) {
            case NODE_PORT -> "NodePort";
            case LOAD_BALANCER -> "LoadBalancer";
            default -> "ClusterIP";
        };
        boolean headless = kind == Kind.HEADLESS;
        List<String> extIPs = new ArrayList<>();
        if (!headless && rnd.nextInt(7) == 0) {
            for (int k = 1 + rnd.nextInt(2); k > 0; k--) {
                IpFamily f = rnd.nextInt(8) == 0 ? other(fams) : pick(fams);
                String ip = shared(f, ports);
                extIPs.add(claim(ip != null ? ip : externalIP(f), ports));
            }
        }
        List<ServiceObject.LoadBalancerIngress> ingress = new ArrayList<>();
        List<String> ranges = new ArrayList<>();
        boolean lb = kind == Kind.LOAD_BALANCER;
        if (lb) {
            for (int k = rnd.nextInt(6) == 0 ? 0 : 1 + rnd.nextInt(2); k > 0; k--) {
                ServiceObject.LoadBalancerIngress in = ingress(pick(fams), ports);
                if (in.ip() != null) claim(in.ip(), ports);
                ingress.add(in);
            }
            if (rnd.nextInt(3) == 0) ranges.addAll(sourceRanges(fams));
        }
        String affinity = null;
        Integer timeout = null;
        if (!headless && rnd.nextInt(5) == 0) {
            affinity = "ClientIP";
            timeout = rnd.nextBoolean() ? null : pick(List.of(1, 60, 600, 10800, 86400));
        } else if (rnd.nextBoolean()) {
            affinity = "None";
        }
        boolean external = kind == Kind.NODE_PORT || lb;
        String etp = external ? (rnd.nextInt(3) == 0 ? "Local" : "Cluster") : null;
        String itp = headless ? null : rnd.nextInt(6) == 0 ? "Local" : rnd.nextBoolean() ? "Cluster" : null;
        Integer hcnp = lb && "Local".equals(etp) ? nodePort() : null;
        if (external) ports = withNodePorts(ports, lb && rnd.nextInt(6) == 0);
        String distribution = headless || rnd.nextInt(5) > 0 ? null : pick(List.of("PreferClose", "PreferSameZone", "PreferSameNode"));
        return new ServiceObject(meta, type, clusterIPs.get(0), clusterIPs, fams.stream().map(IpFamily::apiName).toList(),
                ports, extIPs, ingress, ranges, affinity, timeout, etp, itp, hcnp, distribution);
    }

    /** One to five ports with distinct names (when more than one) and distinct number and protocol. */
    private List<ServiceObject.PortSpec> ports(Kind kind) {
        int n = rnd.nextInt(10) < 6 ? 1 : 2 + rnd.nextInt(rnd.nextInt(5) == 0 ? 4 : 2);
        if (kind == Kind.HEADLESS && rnd.nextInt(4) == 0) n = 0;
        List<ServiceObject.PortSpec> out = new ArrayList<>();
        Set<String> used = new HashSet<>();
        boolean named = n > 1 || rnd.nextBoolean();
        while (out.size() < n) {
            String proto = weighted(Map.of("TCP", 60, "UDP", 28, "SCTP", 12));
            int port = pick(List.of(53, 80, 443, 8080, 9000, 5000 + rnd.nextInt(100)));
            if (!used.add(port + "/" + proto)) continue;
            String target = rnd.nextBoolean() ? String.valueOf(8000 + rnd.nextInt(100)) : null;
            out.add(new ServiceObject.PortSpec(named ? proto.toLowerCase() + "-" + port : null, proto, port, target, null));
            // Now and then the same number on a second protocol, as DNS has it.
            if (out.size() < n || !named || rnd.nextInt(8) > 0) continue;
            String twin = proto.equals("UDP") ? "TCP" : "UDP";
            if (used.add(port + "/" + twin)) out.add(new ServiceObject.PortSpec(twin.toLowerCase() + "-" + port, twin, port, target, null));
        }
        return out;
    }

    private List<ServiceObject.PortSpec> withNodePorts(List<ServiceObject.PortSpec> ports, boolean none) {
        return ports.stream().map(p -> new ServiceObject.PortSpec(p.name(), p.protocol(), p.port(), p.targetPort(),
                none ? null : nodePort())).toList();
    }

    /** A node port no other port of the cluster holds (the API server's allocator refuses a second claim). */
    private Integer nodePort() {
        for (int tries = 0; tries < 64; tries++) {
            int p = rnd.nextInt(4) == 0 ? NODE_PORT_MIN + rnd.nextInt(NODE_PORT_MAX - NODE_PORT_MIN + 1) : nextNodePort++;
            if (p <= NODE_PORT_MAX && nodePorts.add(p)) return p;
        }
        for (int p = NODE_PORT_MIN; p <= NODE_PORT_MAX; p++) if (nodePorts.add(p)) return p;
        throw new IllegalStateException("all " + (NODE_PORT_MAX - NODE_PORT_MIN + 1) + " node ports are taken; generate fewer NodePort Services");
    }

    private List<IpFamily> serviceFamilies() {
        List<IpFamily> fams = node.families();
        if (fams.size() == 1) return fams;
        return switch (rnd.nextInt(5)) {
            case 0 -> List.of(fams.get(0), fams.get(1));
            case 1 -> List.of(fams.get(1), fams.get(0));
            case 2 -> List.of(fams.get(1));
            default -> List.of(fams.get(0));
        };
    }

    static String clusterIP(IpFamily f, int i) {
        int n = i + 16;
        return f == IpFamily.IPV4 ? "172.30." + (n >> 8) + "." + (n & 0xff) : "fd00:172:30::" + Integer.toHexString(n);
    }

    private String externalIP(IpFamily f) {
        int n = externalIPs++;
        return f == IpFamily.IPV4 ? "192.168." + (100 + n / 250) + "." + (1 + n % 250) : "2001:db8:1::" + Integer.toHexString(n + 1);
    }

    /**
     * Now and then an address another Service already has on other ports (one VIP or externalIP shared by several
     * Services, as load-balancer implementations do), never on a port and protocol it already serves; else null.
     */
    private String shared(IpFamily f, List<ServiceObject.PortSpec> ports) {
        if (rnd.nextInt(4) > 0) return null;
        List<String> free = sharedAddresses.entrySet().stream()
                .filter(e -> (e.getKey().contains(":") ? IpFamily.IPV6 : IpFamily.IPV4) == f)
                .filter(e -> ports.stream().noneMatch(p -> e.getValue().contains(p.port() + "/" + p.protocol())))
                .map(Map.Entry::getKey).toList();
        return free.isEmpty() ? null : pick(free);
    }

    private String claim(String ip, List<ServiceObject.PortSpec> ports) {
        Set<String> used = sharedAddresses.computeIfAbsent(ip, k -> new HashSet<>());
        ports.forEach(p -> used.add(p.port() + "/" + p.protocol()));
        return ip;
    }

    private ServiceObject.LoadBalancerIngress ingress(IpFamily f, List<ServiceObject.PortSpec> ports) {
        if (rnd.nextInt(10) == 0) return new ServiceObject.LoadBalancerIngress(null, "lb" + vips++ + ".example.com", null);
        int n = vips++;
        String ip = shared(f, ports);
        if (ip == null) {
            ip = f == IpFamily.IPV4 ? (n < 250 ? "203.0.113." + (n + 1) : "192.168." + (200 + (n - 250) / 250) + "." + (1 + n % 250))
                    : "2001:db8:2::" + Integer.toHexString(n + 1);
        }
        String mode = switch (rnd.nextInt(6)) {
            case 0 -> "Proxy";
            case 1, 2 -> "VIP";
            default -> null;
        };
        return new ServiceObject.LoadBalancerIngress(ip, null, mode);
    }

    /** Always the allowed external clients' range of each family, sometimes the pods' or the LAN's too. */
    private List<String> sourceRanges(List<IpFamily> fams) {
        List<String> out = new ArrayList<>();
        for (IpFamily f : fams) out.add(f == IpFamily.IPV4 ? "198.51.100.0/25" : "2001:db8::/64");
        if (rnd.nextInt(3) == 0) out.add(pick(fams) == IpFamily.IPV4 ? "10.0.0.0/16" : "fd00:10::/96");
        if (rnd.nextInt(4) == 0) out.add(pick(fams) == IpFamily.IPV4 ? "192.168.10.0/24" : "fd00:192:168:10::/64");
        return out;
    }

    private List<EndpointSliceObject> slices(ServiceObject s, int i) {
        if ("ExternalName".equals(s.type()) || rnd.nextInt(10) == 0) return List.of();
        List<IpFamily> fams = s.ipFamilies().isEmpty() ? node.families() : s.ipFamilies().stream()
                .map(a -> a.equals("IPv4") ? IpFamily.IPV4 : IpFamily.IPV6).toList();
        boolean hints = s.trafficDistribution() != null;
        boolean nodeHints = "PreferSameNode".equals(s.trafficDistribution());
        List<EndpointSliceObject> out = new ArrayList<>();
        for (IpFamily f : fams) {
            int count = rnd.nextInt(6) == 0 ? 2 + rnd.nextInt(2) : 1;
            List<EndpointSliceObject.PortSpec> ports = slicePorts(s);
            List<EndpointSliceObject.Endpoint> first = null;
            for (int k = 0; k < count; k++) {
                List<EndpointSliceObject.Endpoint> eps = new ArrayList<>();
                int n = switch (rnd.nextInt(20)) {
                    case 0 -> 0;
                    case 1, 2 -> 13 + rnd.nextInt(8);
                    case 3 -> 40;
                    default -> 1 + rnd.nextInt(4);
                };
                Set<String> seen = new HashSet<>();
                for (int e = 0; e < n; e++) {
                    EndpointSliceObject.Endpoint ep = endpoint(f, hints, nodeHints);
                    if (seen.add(ep.addresses().get(0))) eps.add(ep);
                }
                // An endpoint in two slices of one Service (a pod moving between them), sometimes terminating in one.
                if (first != null && !first.isEmpty() && rnd.nextInt(3) == 0) {
                    EndpointSliceObject.Endpoint d = first.get(0);
                    if (seen.add(d.addresses().get(0))) {
                        eps.add(rnd.nextBoolean() ? d : new EndpointSliceObject.Endpoint(d.addresses(), false, true, true,
                                d.nodeName(), d.zone(), List.of(), List.of()));
                    }
                }
                if (first == null) first = eps;
                Map<String, String> labels = new LinkedHashMap<>();
                labels.put(EndpointSliceObject.SERVICE_NAME_LABEL, s.meta().name());
                labels.put("endpointslice.kubernetes.io/managed-by", "random-clusters.nftproxy.io");
                // The endpoint slice controller copies these from the Service.
                for (String l : List.of(LABEL_PROXY_NAME, LABEL_HEADLESS)) {
                    if (s.meta().labels().containsKey(l)) labels.put(l, s.meta().labels().get(l));
                }
                String name = s.meta().name() + "-" + f.apiName().toLowerCase() + "-" + k;
                out.add(new EndpointSliceObject(new ObjectMeta(s.meta().namespace(), name, labels, Map.of(), false),
                        f.apiName(), ports, eps));
            }
        }
        return out;
    }

    /** The Service's ports with target numbers; now and then one is missing (its targetPort named nothing). */
    private List<EndpointSliceObject.PortSpec> slicePorts(ServiceObject s) {
        List<EndpointSliceObject.PortSpec> out = new ArrayList<>();
        for (ServiceObject.PortSpec p : s.ports()) {
            if (s.ports().size() > 1 && rnd.nextInt(15) == 0) continue;
            int target = p.targetPort() != null ? Integer.parseInt(p.targetPort()) : p.port();
            out.add(new EndpointSliceObject.PortSpec(p.name() == null ? "" : p.name(), p.protocol(), target));
        }
        return out;
    }

    private EndpointSliceObject.Endpoint endpoint(IpFamily f, boolean zoneHints, boolean nodeHints) {
        String where = weighted(Map.of(NODE, 40, OTHER_NODES.get(0), 40, OTHER_NODES.get(1), 14, "", 6));
        int subnet = where.equals(NODE) ? 1 : where.isEmpty() ? 9 : 2 + OTHER_NODES.indexOf(where);
        int host = 2 + rnd.nextInt(200);
        String ip = f == IpFamily.IPV4 ? "10.0." + subnet + "." + host : "fd00:10::" + subnet + ":" + Integer.toHexString(host);
        Boolean ready, serving, terminating;
        switch (rnd.nextInt(20)) {
            case 0, 1 -> { ready = false; serving = false; terminating = false; }
            case 2, 3 -> { ready = false; serving = true; terminating = true; }
            case 4 -> { ready = false; serving = false; terminating = true; }
            case 5 -> { ready = null; serving = null; terminating = null; }
            case 6 -> { ready = false; serving = true; terminating = false; }
            default -> { ready = true; serving = true; terminating = false; }
        }
        String zone = where.isEmpty() ? null : where.equals(NODE) ? ZONE : pick(ZONES);
        List<String> zh = List.of(), nh = List.of();
        if (zoneHints && rnd.nextInt(12) > 0) {
            zh = zone != null ? List.of(zone) : List.of(pick(ZONES));
            if (nodeHints && !where.isEmpty()) nh = List.of(where);
        }
        return new EndpointSliceObject.Endpoint(List.of(ip), ready, serving, terminating, where.isEmpty() ? null : where,
                zone, zh, nh);
    }

    private IpFamily other(List<IpFamily> fams) {
        return fams.get(0) == IpFamily.IPV4 ? IpFamily.IPV6 : IpFamily.IPV4;
    }

    private <T> T pick(List<T> l) { return l.get(rnd.nextInt(l.size())); }

    /** A key drawn by weight, in a fixed order so that the same seed draws the same key. */
    private <T extends Comparable<T>> T weighted(Map<T, Integer> weights) {
        List<T> keys = new ArrayList<>(weights.keySet());
        keys.sort(null);
        int total = weights.values().stream().mapToInt(Integer::intValue).sum();
        int r = rnd.nextInt(total);
        for (T k : keys) {
            r -= weights.get(k);
            if (r < 0) return k;
        }
        throw new IllegalStateException("unreachable");
    }
}
