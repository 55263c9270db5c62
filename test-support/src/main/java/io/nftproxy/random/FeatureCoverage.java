package io.nftproxy.random;

import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ServiceObject;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The proxy features a cluster uses, by name: what the generator promises to cover, checked over many seeds, and
 * what a report says a run exercised. A feature is named for the object field or node setting that carries it.
 */
public final class FeatureCoverage {
    private FeatureCoverage() {}

    /** Every feature {@link #of} can name: a run over enough seeds must see each. */
    public static final Set<String> ALL = Set.of(
            "type ClusterIP", "type NodePort", "type LoadBalancer", "headless", "type ExternalName",
            "LoadBalancer VIP", "LoadBalancer without VIP", "ipMode VIP", "ipMode Proxy", "ipMode unset", "hostname ingress",
            "allocateLoadBalancerNodePorts false", "externalIPs", "address shared by two Services", "externalIP of the other family", "loadBalancerSourceRanges",
            "ClientIP affinity", "ClientIP affinity timeout", "internalTrafficPolicy Local", "externalTrafficPolicy Local",
            "healthCheckNodePort", "trafficDistribution", "zone hints", "node hints", "named port", "unnamed port",
            "several ports", "one number on two protocols", "TCP", "UDP", "SCTP", "IPv4 Service", "IPv6 Service",
            "dual-stack Service", "service-proxy-name label", "no slice", "empty slice", "several slices per Service",
            "endpoint in two slices", "ready endpoint", "not-ready endpoint", "serving-terminating endpoint",
            "terminating not-serving endpoint", "unset conditions", "endpoint on this node", "endpoint on another node",
            "endpoint on no node", "slice missing a port", "more than 16 endpoints",
            "node IPv4", "node IPv6", "node dual-stack", "nodePortAddresses default", "nodePortAddresses primary",
            "nodePortAddresses CIDRs", "second node address", "masqueradeAll", "no cluster CIDR",
            "detect-local ClusterCIDR", "detect-local NodeCIDR", "detect-local BridgeInterface",
            "detect-local InterfaceNamePrefix");

    public static Set<String> of(RandomCluster c) {
        Set<String> f = new HashSet<>();
        NodeSettings n = c.node();
        f.add(n.families().size() > 1 ? "node dual-stack" : "node " + n.families().get(0).apiName());
        f.add(n.nodePortAddresses().isEmpty() ? "nodePortAddresses default" : n.nodePortAddresses().contains("primary")
                ? "nodePortAddresses primary" : "nodePortAddresses CIDRs");
        if (!n.externalIPs().isEmpty()) f.add("second node address");
        if (n.masqueradeAll()) f.add("masqueradeAll");
        if (n.clusterCidrs().isEmpty()) f.add("no cluster CIDR");
        f.add("detect-local " + n.detectLocalMode());
        Set<String> addresses = new HashSet<>();
        for (ServiceObject s : c.services()) {
            Set<String> own = new HashSet<>(s.externalIPs());
            s.loadBalancerIngress().stream().filter(i -> i.ip() != null).forEach(i -> own.add(i.ip()));
            for (String a : own) if (!addresses.add(a)) f.add("address shared by two Services");
        }
        for (ServiceObject s : c.services()) {
            boolean headless = "None".equals(s.clusterIP());
            f.add(headless ? "headless" : "type " + s.type());
            if (s.meta().labels().containsKey(ClusterGenerator.LABEL_PROXY_NAME)) f.add("service-proxy-name label");
            if (s.ipFamilies().size() > 1) f.add("dual-stack Service");
            else s.ipFamilies().forEach(a -> f.add(a + " Service"));
            for (ServiceObject.LoadBalancerIngress i : s.loadBalancerIngress()) {
                if (i.ip() == null) {
                    f.add("hostname ingress");
                    continue;
                }
                f.add("LoadBalancer VIP");
                f.add("ipMode " + (i.ipMode() == null ? "unset" : i.ipMode()));
            }
            if ("LoadBalancer".equals(s.type()) && s.loadBalancerIngress().stream().allMatch(i -> i.ip() == null)) {
                f.add("LoadBalancer without VIP");
            }
            if ("LoadBalancer".equals(s.type()) && s.ports().stream().allMatch(p -> p.nodePort() == null)) {
                f.add("allocateLoadBalancerNodePorts false");
            }
            if (!s.externalIPs().isEmpty()) f.add("externalIPs");
            if (s.externalIPs().stream().anyMatch(a -> !s.ipFamilies().contains(a.contains(":") ? "IPv6" : "IPv4"))) {
                f.add("externalIP of the other family");
            }
            if (!s.loadBalancerSourceRanges().isEmpty()) f.add("loadBalancerSourceRanges");
            if ("ClientIP".equals(s.sessionAffinity())) {
                f.add("ClientIP affinity");
                if (s.sessionAffinityTimeoutSeconds() != null) f.add("ClientIP affinity timeout");
            }
            if ("Local".equals(s.internalTrafficPolicy())) f.add("internalTrafficPolicy Local");
            if ("Local".equals(s.externalTrafficPolicy())) f.add("externalTrafficPolicy Local");
            if (s.healthCheckNodePort() != null) f.add("healthCheckNodePort");
            if (s.trafficDistribution() != null) f.add("trafficDistribution");
            if (s.ports().size() > 1) f.add("several ports");
            Set<Integer> numbers = new HashSet<>();
            for (ServiceObject.PortSpec p : s.ports()) {
                f.add(p.protocol());
                f.add(p.name() == null ? "unnamed port" : "named port");
                if (!numbers.add(p.port())) f.add("one number on two protocols");
            }
            List<EndpointSliceObject> slices = c.slicesOf(s);
            if (!"ExternalName".equals(s.type())) slicesOf(s, slices, f);
        }
        return f;
    }

    private static void slicesOf(ServiceObject s, List<EndpointSliceObject> slices, Set<String> f) {
        if (slices.isEmpty()) f.add("no slice");
        Set<String> perFamily = new HashSet<>();
        Set<String> addresses = new HashSet<>();
        int total = 0;
        for (EndpointSliceObject sl : slices) {
            if (!perFamily.add(sl.addressType())) f.add("several slices per Service");
            if (sl.endpoints().isEmpty()) f.add("empty slice");
            if (sl.ports().size() < s.ports().size()) f.add("slice missing a port");
            total += sl.endpoints().size();
            for (EndpointSliceObject.Endpoint e : sl.endpoints()) {
                if (!addresses.add(e.addresses().get(0))) f.add("endpoint in two slices");
                f.add(e.nodeName() == null ? "endpoint on no node" : ClusterGenerator.NODE.equals(e.nodeName())
                        ? "endpoint on this node" : "endpoint on another node");
                if (!e.zoneHints().isEmpty()) f.add("zone hints");
                if (!e.nodeHints().isEmpty()) f.add("node hints");
                if (e.ready() == null) f.add("unset conditions");
                else if (e.ready()) f.add("ready endpoint");
                else if (Boolean.TRUE.equals(e.terminating())) f.add(Boolean.TRUE.equals(e.serving())
                        ? "serving-terminating endpoint" : "terminating not-serving endpoint");
                else f.add("not-ready endpoint");
            }
        }
        if (total > 16) f.add("more than 16 endpoints");
    }

    /** The features of {@link #ALL} that none of {@code seen} has, sorted. */
    public static List<String> missing(Set<String> seen) {
        return new ArrayList<>(new TreeSet<>(ALL.stream().filter(x -> !seen.contains(x)).toList()));
    }
}
