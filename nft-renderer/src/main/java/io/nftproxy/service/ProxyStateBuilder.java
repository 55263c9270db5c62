package io.nftproxy.service;

import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns an untrusted {@link ClusterSnapshot} into the validated {@link ProxyState} of one family. Each object is
 * validated on its own: a bad Service, port, address or endpoint is skipped with a {@link Diagnostic} and never
 * affects any other object.
 */
public final class ProxyStateBuilder {
    public static final String PROXY_NAME_LABEL = "service.kubernetes.io/service-proxy-name";
    public static final String HEADLESS_LABEL = "service.kubernetes.io/headless";
    /** Upstream's API default for {@code sessionAffinityConfig.clientIP.timeoutSeconds}. */
    public static final int DEFAULT_AFFINITY_TIMEOUT = 10800;
    private static final int MAX_AFFINITY_TIMEOUT = 86400;

    private final IpFamily family;
    private final String nodeName;
    private final ServiceClaims claims;
    private final List<Diagnostic> diagnostics = new ArrayList<>();

    private ProxyStateBuilder(IpFamily family, String nodeName, ServiceClaims claims) {
        this.family = family;
        this.nodeName = nodeName;
        this.claims = claims;
    }

    public static ProxyState build(ClusterSnapshot snapshot, IpFamily family, String nodeName) {
        return build(snapshot, family, nodeName, ServiceClaims.of(snapshot.services(), Map.of(), List.of(), false));
    }

    /** {@link #build} with node ports given out by {@code claims}, which must hold the snapshot's Services. */
    public static ProxyState build(ClusterSnapshot snapshot, IpFamily family, String nodeName, ServiceClaims claims) {
        return new ProxyStateBuilder(family, nodeName, claims).run(snapshot);
    }

    /** True for Services and slices the proxy must ignore by label, as kube-proxy's informer selector does. */
    public static boolean ignoredByLabel(Map<String, String> labels) {
        return labels.containsKey(PROXY_NAME_LABEL) || labels.containsKey(HEADLESS_LABEL);
    }

    /**
     * One Service's state: the ports of {@code services} (normally one object; more are duplicates, reported as
     * {@link #build} reports them) and the endpoints of {@code slices}, which are the slices whose namespace and
     * {@code kubernetes.io/service-name} label name that Service. The same code as {@link #build}: the union of
     * every Service's state and the ServiceCIDRs of {@code build} over no services is {@code build}'s state.
     */
    public static ProxyState buildService(List<ServiceObject> services, List<EndpointSliceObject> slices,
                                          IpFamily family, String nodeName, ServiceClaims claims) {
        ProxyStateBuilder b = new ProxyStateBuilder(family, nodeName, claims);
        return new ProxyState(family, b.servicePorts(services), b.mergeSlices(slices), List.of(), b.diagnostics);
    }

    /** True for a Service kube-proxy serves a health-check NodePort for: an eTP=Local LoadBalancer. */
    public static boolean usesHealthCheckNodePort(ServiceObject svc) {
        return "LoadBalancer".equals(svc.type()) && "Local".equals(svc.externalTrafficPolicy());
    }

    /** The Service an object belongs to for {@link #buildService}: {@code namespace/name} as the API spells it. */
    public static String serviceKey(ServiceObject svc) {
        return serviceKey(svc.meta().namespace(), svc.meta().name());
    }

    /**
     * The Service a slice belongs to: its namespace and {@code kubernetes.io/service-name} label, unvalidated. A slice
     * without the label gets {@code namespace/}, which no valid Service has, so its diagnostics still have a home.
     */
    public static String serviceKey(EndpointSliceObject slice) {
        return serviceKey(slice.meta().namespace(), slice.serviceName());
    }

    private static String serviceKey(String namespace, String name) {
        return (namespace == null ? "" : namespace) + "/" + (name == null ? "" : name);
    }

    private ProxyState run(ClusterSnapshot snapshot) {
        TreeMap<ServicePortName, ServicePort> ports = servicePorts(snapshot.services());
        Map<ServicePortName, List<Endpoint>> endpoints = mergeSlices(snapshot.endpointSlices());
        List<IpPrefix> cidrs = new ArrayList<>();
        for (ServiceCidrObject sc : snapshot.serviceCidrs()) {
            prefixes(sc.cidrs(), cidrs, "ServiceCIDR", sc.meta().key(), "spec.cidrs");
        }
        cidrs.sort(Comparator.naturalOrder());
        return new ProxyState(family, ports, endpoints, cidrs, diagnostics);
    }

    private TreeMap<ServicePortName, ServicePort> servicePorts(List<ServiceObject> services) {
        TreeMap<ServicePortName, ServicePort> ports = new TreeMap<>();
        for (ServiceObject svc : byNamespaceAndName(services, ServiceObject::meta)) {
            try {
                for (ServicePort sp : servicePorts(svc)) {
                    if (ports.putIfAbsent(sp.name(), sp) != null) {
                        skip("Service", svc.meta().key(), "metadata.name", "duplicate Service object; first one kept");
                    }
                }
            } catch (InvalidInputException e) {
                skip("Service", svc.meta().key(), e.field(), e.getMessage());
            }
        }
        return ports;
    }

    /** By namespace and name: which of two duplicates wins must not depend on the order the API listed them in. */
    private static <T> List<T> byNamespaceAndName(List<T> l, java.util.function.Function<T, io.nftproxy.cluster.ObjectMeta> meta) {
        if (l.size() <= 1) return l;
        List<T> s = new ArrayList<>(l);
        s.sort(Comparator.comparing((T x) -> String.valueOf(meta.apply(x).namespace()))
                .thenComparing(x -> String.valueOf(meta.apply(x).name())));
        return s;
    }

    private List<ServicePort> servicePorts(ServiceObject svc) {
        if (ignoredByLabel(svc.meta().labels()) || "ExternalName".equals(svc.type())) return List.of();
        if (svc.clusterIP() == null || svc.clusterIP().isEmpty() || "None".equals(svc.clusterIP())) return List.of();
        String ns = Names.namespace(svc.meta().namespace());
        String name = Names.serviceName(svc.meta().name());
        String key = ns + "/" + name;
        IpAddress clusterIP = clusterIP(svc);
        if (clusterIP == null) return List.of();

        List<IpAddress> externalIPs = addresses(key, "spec.externalIPs", svc.externalIPs());
        List<String> lbIngress = svc.loadBalancerIngress().stream()
                .filter(i -> i.ip() != null && !i.ip().isEmpty())
                .filter(i -> i.ipMode() == null || i.ipMode().isEmpty() || "VIP".equals(i.ipMode()))
                .map(ServiceObject.LoadBalancerIngress::ip).toList();
        List<IpAddress> lbIPs = addresses(key, "status.loadBalancer.ingress.ip", lbIngress);
        List<IpPrefix> ranges = new ArrayList<>();
        prefixes(svc.loadBalancerSourceRanges(), ranges, "Service", key, "spec.loadBalancerSourceRanges");
        int affinity = affinityTimeout(svc, key);
        boolean iLocal = policyIsLocal(svc.internalTrafficPolicy(), key, "spec.internalTrafficPolicy");
        boolean eLocal = policyIsLocal(svc.externalTrafficPolicy(), key, "spec.externalTrafficPolicy");
        int hcnp = 0;
        if ("LoadBalancer".equals(svc.type()) && eLocal && svc.healthCheckNodePort() != null
                && svc.healthCheckNodePort() != 0) {
            try {
                hcnp = Names.port(svc.healthCheckNodePort(), "spec.healthCheckNodePort");
                String lost = claims.lostTo(key, Protocol.TCP, hcnp);
                if (lost != null) {
                    skip("Service", key, "spec.healthCheckNodePort", lost);
                    hcnp = 0;
                }
            } catch (InvalidInputException e) {
                skip("Service", key, e.field(), e.getMessage());
            }
        }

        List<ServicePort> out = new ArrayList<>();
        Set<ServicePortName> seen = new HashSet<>();
        for (ServiceObject.PortSpec p : svc.ports()) {
            try {
                Protocol proto = Protocol.fromApi(p.protocol());
                String portName = Names.portName(p.name(), "spec.ports.name");
                int port = Names.port(p.port(), "spec.ports.port");
                int nodePort = p.nodePort() == null || p.nodePort() == 0 ? 0 : Names.port(p.nodePort(), "spec.ports.nodePort");
                ServicePortName spn = new ServicePortName(ns, name, portName, proto);
                if (!seen.add(spn)) {
                    skip("Service", key, "spec.ports", "duplicate port " + spn.elementComment() + " " + proto + "; first kept");
                    continue;
                }
                String lost = nodePort == 0 ? null : claims.lostTo(key, proto, nodePort);
                if (lost != null) {
                    // The service port itself still works inside the cluster; only the node port is withheld.
                    skip("Service", key, "spec.ports.nodePort", "nodePort of " + spn.elementComment() + ": " + lost);
                    nodePort = 0;
                }
                out.add(new ServicePort(spn, family, clusterIP, port, nodePort, externalIPs, lbIPs, ranges, affinity,
                        iLocal, eLocal, hcnp, p.targetPort()));
            } catch (InvalidInputException e) {
                skip("Service", key, e.field(), e.getMessage());
            }
        }
        return out;
    }

    /** The ClusterIP of this family: by {@code ipFamilies} index when given, else {@code clusterIP} if it matches. */
    private IpAddress clusterIP(ServiceObject svc) {
        List<String> ips = svc.clusterIPs().isEmpty() ? List.of(svc.clusterIP()) : svc.clusterIPs();
        if (!svc.ipFamilies().isEmpty()) {
            int i = svc.ipFamilies().indexOf(family.apiName());
            if (i < 0 || i >= ips.size()) return null;
            IpAddress a = address(ips.get(i), "spec.clusterIPs");
            if (a.family() != family) {
                throw new InvalidInputException("spec.clusterIPs", ips.get(i), "an " + family.apiName() + " address as spec.ipFamilies says");
            }
            return a;
        }
        for (String s : ips) {
            IpAddress a = address(s, "spec.clusterIP");
            if (a.family() == family) return a;
        }
        return null;
    }

    private List<IpAddress> addresses(String key, String field, List<String> texts) {
        List<IpAddress> out = new ArrayList<>();
        for (String t : texts) {
            try {
                IpAddress a = address(t, field);
                if (a.isUnspecified() || a.isLoopback()) throw new InvalidInputException(field, t, "a routable unicast address");
                if (a.family() == family && !out.contains(a)) {
                    String overlap = claims.overlap(key, a);
                    if (overlap != null && claims.refusesOverlaps()) {
                        skip("Service", key, field, overlap);
                        continue;
                    }
                    out.add(a);
                    if (overlap != null) diagnostics.add(new Diagnostic("Service", key, field, overlap, true));
                }
            } catch (InvalidInputException e) {
                skip("Service", key, field, e.getMessage());
            }
        }
        return out;
    }

    /** Adds the prefixes of this family among {@code texts} to {@code out}, each once; reports the invalid ones. */
    private void prefixes(List<String> texts, List<IpPrefix> out, String kind, String object, String field) {
        for (String t : texts) {
            try {
                IpPrefix p = IpPrefix.parse(t);
                if (p.family() == family && !out.contains(p)) out.add(p);
            } catch (InvalidInputException e) {
                skip(kind, object, field, e.getMessage());
            }
        }
    }

    private int affinityTimeout(ServiceObject svc, String key) {
        if (!"ClientIP".equals(svc.sessionAffinity())) return 0;
        Integer t = svc.sessionAffinityTimeoutSeconds();
        if (t == null) return DEFAULT_AFFINITY_TIMEOUT;
        if (t < 1 || t > MAX_AFFINITY_TIMEOUT) {
            skip("Service", key, "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                    "timeout " + t + " outside 1.." + MAX_AFFINITY_TIMEOUT + "; using " + DEFAULT_AFFINITY_TIMEOUT);
            return DEFAULT_AFFINITY_TIMEOUT;
        }
        return t;
    }

    private boolean policyIsLocal(String policy, String key, String field) {
        if (policy == null || policy.isEmpty() || "Cluster".equals(policy)) return false;
        if ("Local".equals(policy)) return true;
        skip("Service", key, field, "unknown policy " + InvalidInputException.printable(policy) + "; treated as Cluster");
        return false;
    }

    private Map<ServicePortName, List<Endpoint>> mergeSlices(List<EndpointSliceObject> slices) {
        Map<ServicePortName, Map<String, Endpoint>> merged = new HashMap<>();
        for (EndpointSliceObject slice : byNamespaceAndName(slices, EndpointSliceObject::meta)) {
            if (!family.apiName().equals(slice.addressType())) continue;
            if (ignoredByLabel(slice.meta().labels())) continue;
            String key = slice.meta().key();
            String ns;
            String svcName;
            try {
                ns = Names.namespace(slice.meta().namespace());
                Names.subdomain(slice.meta().name(), "metadata.name");
                String label = slice.serviceName();
                if (label == null) {
                    skip("EndpointSlice", key, "metadata.labels", "no " + EndpointSliceObject.SERVICE_NAME_LABEL + " label");
                    continue;
                }
                svcName = Names.serviceName(label);
            } catch (InvalidInputException e) {
                skip("EndpointSlice", key, e.field(), e.getMessage());
                continue;
            }
            List<Endpoint> eps = endpoints(slice, key);
            for (EndpointSliceObject.PortSpec p : slice.ports()) {
                ServicePortName spn;
                int port;
                try {
                    if (p.name() == null) throw new InvalidInputException("ports.name", null, "\"\" for an unnamed port, or a DNS-1123 label");
                    Names.portName(p.name(), "ports.name");
                    port = Names.port(p.port(), "ports.port");
                    spn = new ServicePortName(ns, svcName, p.name(), Protocol.fromApi(p.protocol()));
                } catch (InvalidInputException e) {
                    skip("EndpointSlice", key, e.field(), e.getMessage());
                    continue;
                }
                Map<String, Endpoint> byHostPort = merged.computeIfAbsent(spn, k -> new LinkedHashMap<>());
                for (Endpoint e : eps) {
                    Endpoint withPort = new Endpoint(e.ip(), port, e.ready(), e.serving(), e.terminating(), e.local(),
                            e.nodeName(), e.zoneHints(), e.nodeHints());
                    Endpoint prev = byHostPort.get(withPort.hostPort());
                    // The same ip:port in two slices (a pod moving between slices): a non-terminating copy wins.
                    if (prev == null || (prev.terminating() && !withPort.terminating())) {
                        byHostPort.put(withPort.hostPort(), withPort);
                    }
                }
            }
        }
        Map<ServicePortName, List<Endpoint>> out = new HashMap<>();
        merged.forEach((k, v) -> out.put(k, Endpoint.sortedByHostPort(v.values())));
        return out;
    }

    private List<Endpoint> endpoints(EndpointSliceObject slice, String key) {
        List<Endpoint> out = new ArrayList<>();
        for (EndpointSliceObject.Endpoint e : slice.endpoints()) {
            if (e.addresses().isEmpty()) continue;
            try {
                IpAddress ip = address(e.addresses().get(0), "endpoints.addresses");
                if (ip.family() != family) {
                    throw new InvalidInputException("endpoints.addresses", e.addresses().get(0),
                            "an " + family.apiName() + " address in an " + family.apiName() + " slice");
                }
                if (ip.isUnspecified() || ip.isLoopback() || ip.isLinkLocal() || ip.isMulticast()) {
                    throw new InvalidInputException("endpoints.addresses", e.addresses().get(0),
                            "a unicast address that is not unspecified, loopback or link-local");
                }
                String node = e.nodeName() == null || e.nodeName().isEmpty() ? null : Names.subdomain(e.nodeName(), "endpoints.nodeName");
                boolean ready = e.ready() == null || e.ready();
                boolean serving = e.serving() == null || e.serving();
                boolean terminating = e.terminating() != null && e.terminating();
                out.add(new Endpoint(ip, 0, ready, serving, terminating, node != null && node.equals(nodeName), node,
                        Set.copyOf(e.zoneHints()), Set.copyOf(e.nodeHints())));
            } catch (InvalidInputException ex) {
                skip("EndpointSlice", key, ex.field(), ex.getMessage());
            }
        }
        return out;
    }

    /** Parses an address, naming the API field in the error. */
    private static IpAddress address(String text, String field) {
        try {
            return IpAddress.parse(text);
        } catch (InvalidInputException e) {
            throw new InvalidInputException(field, text, e.allowed());
        }
    }

    private void skip(String kind, String object, String field, String reason) {
        diagnostics.add(new Diagnostic(kind, object, field, reason));
    }
}
