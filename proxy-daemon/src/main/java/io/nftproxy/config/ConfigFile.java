package io.nftproxy.config;

import io.nftproxy.proxy.InvalidInputException;
import io.nftproxy.proxy.IpPrefix;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) with upstream's field names, so the file an
 * existing kube-proxy deployment uses (kubeadm writes every field) works unchanged. Fields that only matter to other
 * modes (iptables, ipvs, winkernel) or to the Go runtime are accepted and ignored with a note; a field nftproxy does
 * not know is an error, as is a supported field with a value nftproxy cannot honour.
 */
public final class ConfigFile {
    public static final String API_VERSION = "kubeproxy.config.k8s.io/v1alpha1";
    public static final String KIND = "KubeProxyConfiguration";

    /** Known fields that do not apply to nftables mode or to this implementation; accepted, not applied. */
    private static final Set<String> IGNORED = Set.of("iptables", "ipvs", "winkernel", "enableProfiling",
            "showHiddenMetricsForVersion", "portRange", "udpIdleTimeout", "bindAddressHardFail", "logging",
            "oomScoreAdj", "bindAddress", "windowsRunAsService", "conntrack", "featureGates",
            "clientConnection.acceptContentTypes", "clientConnection.burst", "clientConnection.contentType",
            "clientConnection.qps");

    /** The parsed overrides and notes about accepted-but-ignored fields (for one INFO line each). */
    public record Result(ProxyConfig config, List<String> notes) {}

    private final List<String> notes = new ArrayList<>();

    private ConfigFile() {}

    public static Result read(Path file, ProxyConfig base) throws IOException {
        JsonNode root;
        try {
            root = YAMLMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build().readTree(Files.readAllBytes(file));
        } catch (JacksonException e) {
            throw new ConfigException("file", file, "a YAML KubeProxyConfiguration (" + e.getOriginalMessage().lines().findFirst().orElse("") + ")");
        }
        ConfigFile cf = new ConfigFile();
        return new Result(cf.apply(root, base), List.copyOf(cf.notes));
    }

    ProxyConfig apply(JsonNode root, ProxyConfig base) {
        if (root == null || !root.isObject()) throw new ConfigException("(root)", root == null ? null : root.getNodeType(), "a map");
        if (!API_VERSION.equals(text(root, "apiVersion"))) throw new ConfigException("apiVersion", text(root, "apiVersion"), API_VERSION);
        if (!KIND.equals(text(root, "kind"))) throw new ConfigException("kind", text(root, "kind"), KIND);
        ProxyConfig.Builder b = base.toBuilder();
        for (Map.Entry<String, JsonNode> e : root.properties()) {
            String k = e.getKey();
            JsonNode v = e.getValue();
            switch (k) {
                case "apiVersion", "kind" -> { }
                case "hostnameOverride" -> { String s = str(k, v); if (!s.isEmpty()) b.hostnameOverride = s; }
                case "clusterCIDR" -> b.clusterCidrs = cidrs(k, str(k, v));
                case "nodePortAddresses" -> b.nodePortAddresses = nodePortAddresses(k, v);
                case "healthzBindAddress" -> b.healthzBindAddress = hostPort(k, str(k, v), 10256);
                case "metricsBindAddress" -> b.metricsBindAddress = hostPort(k, str(k, v), 10249);
                case "configSyncPeriod" -> b.configSyncPeriod = GoDuration.parse(k, str(k, v));
                case "mode" -> {
                    String m = str(k, v);
                    if (!m.isEmpty() && !m.equals("nftables")) throw new ConfigException(k, m, "nftables (nftproxy implements nftables mode only)");
                }
                case "detectLocalMode" -> {
                    String m = str(k, v);
                    if (!m.isEmpty() && !m.equals("ClusterCIDR")) throw new ConfigException(k, m, "ClusterCIDR (the only detector nftproxy implements)");
                }
                case "detectLocal" -> detectLocal(v);
                case "clientConnection" -> clientConnection(v, b);
                case "nftables" -> nftables(v, b);
                default -> {
                    if (!IGNORED.contains(k)) throw new ConfigException(k, "(present)", "a KubeProxyConfiguration field nftproxy knows; see docs/configuration.md");
                    notes.add(k + " is accepted but not used by nftproxy");
                }
            }
        }
        return b.build();
    }

    private void detectLocal(JsonNode v) {
        for (Map.Entry<String, JsonNode> e : obj("detectLocal", v).properties()) {
            String f = "detectLocal." + e.getKey();
            if (!Set.of("bridgeInterface", "interfaceNamePrefix").contains(e.getKey())) throw unknown(f);
            if (!str(f, e.getValue()).isEmpty()) throw new ConfigException(f, str(f, e.getValue()), "empty: only the ClusterCIDR detector is implemented");
        }
    }

    private void clientConnection(JsonNode v, ProxyConfig.Builder b) {
        for (Map.Entry<String, JsonNode> e : obj("clientConnection", v).properties()) {
            String f = "clientConnection." + e.getKey();
            if (e.getKey().equals("kubeconfig")) {
                String s = str(f, e.getValue());
                if (!s.isEmpty()) b.kubeconfig = Path.of(s);
            } else if (IGNORED.contains(f)) {
                notes.add(f + " is accepted but not used by nftproxy");
            } else {
                throw unknown(f);
            }
        }
    }

    private void nftables(JsonNode v, ProxyConfig.Builder b) {
        for (Map.Entry<String, JsonNode> e : obj("nftables", v).properties()) {
            String f = "nftables." + e.getKey();
            JsonNode x = e.getValue();
            switch (e.getKey()) {
                case "masqueradeAll" -> {
                    if (!x.isBoolean()) throw new ConfigException(f, x, "true or false");
                    b.masqueradeAll = x.booleanValue();
                }
                case "masqueradeBit" -> {
                    if (x.isNull()) break;
                    if (!x.isIntegralNumber() || x.intValue() < 0 || x.intValue() > 31) throw new ConfigException(f, x, "an integer 0..31");
                    b.masqueradeBit = x.intValue();
                }
                case "minSyncPeriod" -> b.minSyncPeriod = GoDuration.parse(f, str(f, x));
                case "syncPeriod" -> b.syncPeriod = GoDuration.parse(f, str(f, x));
                default -> throw unknown(f);
            }
        }
    }

    private static ConfigException unknown(String f) {
        return new ConfigException(f, "(present)", "a KubeProxyConfiguration field nftproxy knows; see docs/configuration.md");
    }

    static List<IpPrefix> cidrs(String field, String s) {
        List<IpPrefix> out = new ArrayList<>();
        if (s == null || s.isBlank()) return out;
        for (String part : s.split(",")) {
            try {
                out.add(IpPrefix.parse(part.strip()));
            } catch (InvalidInputException e) {
                throw new ConfigException(field, part, "comma-separated CIDRs such as 10.244.0.0/16,fd00:10:244::/56");
            }
        }
        return out;
    }

    private static List<String> nodePortAddresses(String field, JsonNode v) {
        if (v.isNull()) return List.of(ProxyConfig.PRIMARY);
        if (!v.isArray()) throw new ConfigException(field, v.getNodeType(), "a list of CIDRs, or [\"primary\"]");
        List<String> out = new ArrayList<>();
        for (JsonNode x : v.values()) {
            String s = str(field, x);
            if (!s.equals(ProxyConfig.PRIMARY)) {
                try {
                    IpPrefix.parse(s);
                } catch (InvalidInputException e) {
                    throw new ConfigException(field, s, "CIDRs such as 192.168.10.0/24, or \"primary\"");
                }
            }
            out.add(s);
        }
        return out.isEmpty() ? List.of(ProxyConfig.PRIMARY) : out;
    }

    /** {@code host:port} or {@code [v6]:port}; a missing port means the default, as kube-proxy allows. */
    public static InetSocketAddress hostPort(String field, String s, int defaultPort) {
        String host = s;
        int port = defaultPort;
        int colon = s.lastIndexOf(':');
        if (s.startsWith("[")) {
            int close = s.indexOf(']');
            if (close < 0) throw new ConfigException(field, s, "host:port such as 0.0.0.0:10256 or [::]:10256");
            host = s.substring(1, close);
            if (close + 1 < s.length()) {
                if (s.charAt(close + 1) != ':') throw new ConfigException(field, s, "host:port such as [::]:10256");
                port = port(field, s.substring(close + 2));
            }
        } else if (colon >= 0) {
            host = s.substring(0, colon);
            port = port(field, s.substring(colon + 1));
        }
        try {
            io.nftproxy.proxy.IpAddress.parse(host);
        } catch (InvalidInputException e) {
            throw new ConfigException(field, s, "an IP address and port such as 0.0.0.0:10256 (no host names)");
        }
        return new InetSocketAddress(host, port);
    }

    private static int port(String field, String p) {
        try {
            int v = Integer.parseInt(p);
            if (v >= 0 && v <= 65535) return v;
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new ConfigException(field, p, "a port 0..65535 (0 disables the server)");
    }

    private static JsonNode obj(String field, JsonNode v) {
        if (!v.isObject()) throw new ConfigException(field, v.getNodeType(), "a map");
        return v;
    }

    private static String text(JsonNode root, String f) {
        JsonNode v = root.get(f);
        return v == null || !v.isString() ? null : v.stringValue();
    }

    private static String str(String field, JsonNode v) {
        if (v == null || v.isNull()) return "";
        if (!v.isString()) throw new ConfigException(field, v.getNodeType(), "a string");
        return v.stringValue();
    }
}
