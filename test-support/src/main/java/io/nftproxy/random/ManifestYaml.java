package io.nftproxy.random;

import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A {@link RandomCluster} as the multi-document YAML that {@code nftproxy render --manifests DIR} reads (API
 * format: v1 Service with its status, discovery.k8s.io/v1 EndpointSlice, v1 Node, networking.k8s.io/v1
 * ServiceCIDR), headed by the seed and the command that renders it. Every string is written double-quoted, so no
 * value is ever read back as another type. Fields the API server would default are written as it would hold
 * them where the default changes meaning ({@code ipFamilyPolicy}, {@code allocateLoadBalancerNodePorts: false}
 * for a LoadBalancer without node ports, {@code externalName}); Services carry no selector, so that an endpoint
 * slice controller, if one runs, leaves the slices alone.
 */
public final class ManifestYaml {
    public static final String FILE = "cluster.yaml";

    private final StringBuilder sb = new StringBuilder();

    private ManifestYaml() {}

    /** The manifests of {@code c}, one document per object: ServiceCIDR, Node, then each Service and its slices. */
    public static String of(RandomCluster c) {
        ManifestYaml y = new ManifestYaml();
        y.sb.append("# random cluster ").append(c.summary()).append('\n');
        y.sb.append("# render it: nftproxy render --manifests DIR ").append(String.join(" ", c.node().renderArgs())).append('\n');
        y.sb.append("# (the ServiceCIDR is the one the API server makes from --service-cluster-ip-range; post the rest)\n");
        y.serviceCidr(ClusterGenerator.serviceCidr(c.node()));
        y.node(c.node().nodeObject());
        for (ServiceObject s : c.services()) {
            y.service(s);
            for (EndpointSliceObject sl : c.slicesOf(s)) y.slice(sl);
        }
        for (EndpointSliceObject sl : c.slices()) {
            if (c.services().stream().noneMatch(s -> RandomCluster.belongsTo(sl, s))) y.slice(sl);
        }
        return y.sb.toString();
    }

    /** Writes {@link #of} to {@code DIR/cluster.yaml}; returns the file. */
    public static Path write(RandomCluster c, Path dir) throws IOException {
        Files.createDirectories(dir);
        return Files.writeString(dir.resolve(FILE), of(c));
    }

    private void serviceCidr(ServiceCidrObject c) {
        doc("networking.k8s.io/v1", "ServiceCIDR");
        line(0, "metadata:");
        field(1, "name", c.meta().name());
        line(0, "spec:");
        list(1, "cidrs", c.cidrs());
    }

    private void node(NodeObject n) {
        doc("v1", "Node");
        line(0, "metadata:");
        field(1, "name", n.meta().name());
        map(1, "labels", n.meta().labels());
        line(0, "spec:");
        if (!n.podCIDRs().isEmpty()) field(1, "podCIDR", n.podCIDRs().get(0));
        list(1, "podCIDRs", n.podCIDRs());
        line(0, "status:");
        line(1, "addresses:");
        for (NodeObject.Address a : n.addresses()) {
            item(2, "type", a.type());
            field(3, "address", a.address());
        }
    }

    private void service(ServiceObject s) {
        doc("v1", "Service");
        line(0, "metadata:");
        field(1, "name", s.meta().name());
        field(1, "namespace", s.meta().namespace());
        map(1, "labels", s.meta().labels());
        if (s.meta().creationTimestamp() != null) field(1, "creationTimestamp", s.meta().creationTimestamp());
        line(0, "spec:");
        field(1, "type", s.type());
        if ("ExternalName".equals(s.type())) field(1, "externalName", s.meta().name() + "." + s.meta().namespace() + ".example.com");
        field(1, "clusterIP", s.clusterIP());
        list(1, "clusterIPs", s.clusterIPs());
        list(1, "ipFamilies", s.ipFamilies());
        if (!s.ipFamilies().isEmpty()) field(1, "ipFamilyPolicy", s.ipFamilies().size() > 1 ? "RequireDualStack" : "SingleStack");
        if (!s.ports().isEmpty()) line(1, "ports:");
        for (ServiceObject.PortSpec p : s.ports()) {
            item(2, "protocol", p.protocol());
            if (p.name() != null) field(3, "name", p.name());
            number(3, "port", p.port());
            if (p.targetPort() != null) {
                if (p.targetPort().matches("[0-9]+")) number(3, "targetPort", Integer.parseInt(p.targetPort()));
                else field(3, "targetPort", p.targetPort());
            }
            number(3, "nodePort", p.nodePort());
        }
        if ("LoadBalancer".equals(s.type()) && s.ports().stream().allMatch(p -> p.nodePort() == null)) {
            line(1, "allocateLoadBalancerNodePorts: false");
        }
        list(1, "externalIPs", s.externalIPs());
        field(1, "sessionAffinity", s.sessionAffinity());
        if (s.sessionAffinityTimeoutSeconds() != null) {
            line(1, "sessionAffinityConfig:");
            line(2, "clientIP:");
            number(3, "timeoutSeconds", s.sessionAffinityTimeoutSeconds());
        }
        field(1, "externalTrafficPolicy", s.externalTrafficPolicy());
        field(1, "internalTrafficPolicy", s.internalTrafficPolicy());
        number(1, "healthCheckNodePort", s.healthCheckNodePort());
        list(1, "loadBalancerSourceRanges", s.loadBalancerSourceRanges());
        field(1, "trafficDistribution", s.trafficDistribution());
        if (s.loadBalancerIngress().isEmpty()) return;
        line(0, "status:");
        line(1, "loadBalancer:");
        line(2, "ingress:");
        for (ServiceObject.LoadBalancerIngress i : s.loadBalancerIngress()) {
            if (i.ip() != null) {
                item(3, "ip", i.ip());
                field(4, "ipMode", i.ipMode());
            } else {
                item(3, "hostname", i.hostname());
            }
        }
    }

    private void slice(EndpointSliceObject s) {
        doc("discovery.k8s.io/v1", "EndpointSlice");
        line(0, "metadata:");
        field(1, "name", s.meta().name());
        field(1, "namespace", s.meta().namespace());
        map(1, "labels", s.meta().labels());
        field(0, "addressType", s.addressType());
        line(0, s.ports().isEmpty() ? "ports: []" : "ports:");
        for (EndpointSliceObject.PortSpec p : s.ports()) {
            item(1, "name", p.name());
            field(2, "protocol", p.protocol());
            number(2, "port", p.port());
        }
        line(0, s.endpoints().isEmpty() ? "endpoints: []" : "endpoints:");
        for (EndpointSliceObject.Endpoint e : s.endpoints()) {
            line(1, "- addresses: [" + String.join(", ", e.addresses().stream().map(ManifestYaml::quoted).toList()) + "]");
            if (e.ready() != null || e.serving() != null || e.terminating() != null) {
                line(2, "conditions:");
                bool(3, "ready", e.ready());
                bool(3, "serving", e.serving());
                bool(3, "terminating", e.terminating());
            }
            field(2, "nodeName", e.nodeName());
            field(2, "zone", e.zone());
            if (e.zoneHints().isEmpty() && e.nodeHints().isEmpty()) continue;
            line(2, "hints:");
            names(3, "forZones", e.zoneHints());
            names(3, "forNodes", e.nodeHints());
        }
    }

    private void doc(String apiVersion, String kind) {
        sb.append("---\n");
        field(0, "apiVersion", apiVersion);
        field(0, "kind", kind);
    }

    private void line(int depth, String text) { sb.append("  ".repeat(depth)).append(text).append('\n'); }

    private void field(int depth, String key, String value) {
        if (value != null) line(depth, key + ": " + quoted(value));
    }

    private void number(int depth, String key, Integer value) {
        if (value != null) line(depth, key + ": " + value);
    }

    private void bool(int depth, String key, Boolean value) {
        if (value != null) line(depth, key + ": " + value);
    }

    /** The first field of a list item: {@code - key: "value"} at {@code depth}, the item's other fields one deeper. */
    private void item(int depth, String key, String value) { line(depth, "- " + key + ": " + quoted(value)); }

    private void list(int depth, String key, List<String> values) {
        if (values.isEmpty()) return;
        line(depth, key + ":");
        values.forEach(v -> line(depth + 1, "- " + quoted(v)));
    }

    private void names(int depth, String key, List<String> values) {
        if (values.isEmpty()) return;
        line(depth, key + ":");
        values.forEach(v -> item(depth + 1, "name", v));
    }

    private void map(int depth, String key, Map<String, String> m) {
        if (m.isEmpty()) return;
        line(depth, key + ":");
        m.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> line(depth + 1, quoted(e.getKey()) + ": " + quoted(e.getValue())));
    }

    /** A YAML double-quoted scalar (JSON's escapes are YAML's). */
    static String quoted(String s) {
        StringBuilder q = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"' -> q.append("\\\"");
                case '\\' -> q.append("\\\\");
                case '\n' -> q.append("\\n");
                case '\t' -> q.append("\\t");
                default -> {
                    if (ch < 0x20 || ch == 0x7f) q.append(String.format("\\u%04x", (int) ch));
                    else q.append(ch);
                }
            }
        }
        return q.append('"').toString();
    }
}
