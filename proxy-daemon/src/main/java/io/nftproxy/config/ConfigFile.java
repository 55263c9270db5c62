package io.nftproxy.config;

import io.nftproxy.logging.LogSettings;
import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.render.TableLayout;
import org.slf4j.event.Level;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Reads a KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) with upstream's field names, so the file an
 * existing kube-proxy deployment uses (kubeadm writes every field, most at their zero value) works unchanged.
 *
 * <p>As in kube-proxy's own defaulting, an empty string, a zero duration or a null means "the default": kubeadm's
 * {@code healthzBindAddress: ""} is 0.0.0.0:10256 (or [::]:10256 when {@code bindAddress} is IPv6), its
 * {@code nftables.syncPeriod: 0s} is the default sync period. Each field is reported by what it does here:
 * applied; about another proxy mode (DEBUG); accepted and without effect on the dataplane (INFO); set to something
 * that would change behaviour and that nftproxy does not do (WARN, naming the field); or invalid. A value that
 * cannot be parsed is kept as the builder's problem and a parsed one checked by {@link ProxyConfig#validate()}, so
 * all the errors of a file come in one {@link ConfigException}. A field nftproxy does not know is an error.
 * nftproxy's own settings are in a top-level map {@code nftproxy} (see {@code nftproxy(...)}).
 */
public final class ConfigFile {
    public static final String API_VERSION = "kubeproxy.config.k8s.io/v1alpha1";
    public static final String KIND = "KubeProxyConfiguration";
    /** kube-proxy's ports (pkg/cluster/ports): ProxyHealthzPort and ProxyStatusPort. */
    public static final int HEALTHZ_PORT = 10256;
    public static final int METRICS_PORT = 10249;
    /** The top-level map of nftproxy's own settings, beside kube-proxy's fields. */
    public static final String NFTPROXY_SECTION = "nftproxy";

    /** What the file said about one field that is not simply applied; logged at {@code level}, one line each. */
    public record Note(Level level, String field, String text) {
        @Override public String toString() { return field + ": " + text; }
    }

    private final List<Note> notes = new ArrayList<>();
    private final List<ConfigException> errors = new ArrayList<>();

    private ConfigFile() {}

    /**
     * Applies the file's fields to {@code b}; returns the notes about fields that are not simply applied.
     *
     * @throws ConfigException the file is no KubeProxyConfiguration at all (not YAML, another apiVersion or kind)
     */
    public static List<Note> read(Path file, ProxyConfig.Builder b) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        JsonNode root;
        try {
            root = YAMLMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build().readTree(bytes);
        } catch (JacksonException e) {
            SyntaxError at = SyntaxError.of(e, new String(bytes, StandardCharsets.UTF_8), 1);
            throw ConfigException.inFile(file, at.reason().startsWith("a tab character") ? at.toString()
                    : "invalid YAML" + (at.line() > 0 ? " " : ": ") + at);
        }
        ConfigFile cf = new ConfigFile();
        cf.apply(file, root, b);
        return List.copyOf(cf.notes);
    }

    private static final String WHAT_IT_HOLDS = "a KubeProxyConfiguration: a map with apiVersion: " + API_VERSION
            + " and kind: " + KIND + " (see docs/configuration.md)";

    private void apply(Path file, JsonNode root, ProxyConfig.Builder b) {
        if (root == null || root.isMissingNode() || root.isNull()) {
            throw ConfigException.inFile(file, "the file is empty; it should hold " + WHAT_IT_HOLDS);
        }
        if (!root.isObject()) {
            throw ConfigException.inFile(file, "the file holds " + typeName(root) + ", not a map; it should hold " + WHAT_IT_HOLDS);
        }
        for (String f : List.of("apiVersion", "kind")) {
            if (!root.has(f)) throw ConfigException.inFile(file, f + " is missing; it should hold " + WHAT_IT_HOLDS);
        }
        if (!API_VERSION.equals(text(root, "apiVersion"))) throw new ConfigException("apiVersion", root.get("apiVersion"), API_VERSION);
        if (!KIND.equals(text(root, "kind"))) throw new ConfigException("kind", root.get("kind"), KIND);
        // bindAddress first: the defaults of the two server addresses follow its family, as in kube-proxy.
        IpAddress bind = field(() -> bindAddress(root.get("bindAddress")));
        if (bind != null) b.bindAddress = bind;
        IpFamily family = bind == null ? IpFamily.IPV4 : bind.family();
        section(null, root, (key, f, x) -> applyField(key, x, b, family));
        if (!errors.isEmpty()) b.problem(ConfigException.of(errors));
    }

    /** What a node holds, for messages: "a list", "the number 5". */
    private static String typeName(JsonNode n) {
        if (n.isArray()) return "a list";
        if (n.isObject()) return "a map";
        if (n.isString()) return "the string \"" + n.stringValue() + "\"";
        return "the " + (n.isNumber() ? "number" : n.isBoolean() ? "boolean" : "value") + " " + n.asString();
    }

    private void applyField(String k, JsonNode v, ProxyConfig.Builder b, IpFamily family) {
        switch (k) {
            case "apiVersion", "kind", "bindAddress" -> { }
            case "hostnameOverride" -> { String s = str(k, v); if (!s.isEmpty()) b.hostnameOverride = s; }
            case "clusterCIDR" -> b.clusterCidrs = cidrs(k, str(k, v));
            case "nodePortAddresses" -> b.nodePortAddresses = nodePortAddresses(v);
            case "healthzBindAddress" -> b.healthzBindAddress = serverAddress(k, str(k, v), family == IpFamily.IPV4 ? "0.0.0.0" : "::", HEALTHZ_PORT);
            case "metricsBindAddress" -> b.metricsBindAddress = serverAddress(k, str(k, v), family == IpFamily.IPV4 ? "127.0.0.1" : "::1", METRICS_PORT);
            case "configSyncPeriod" -> setIfNonZero(k, v, d -> b.configSyncPeriod = d);
            case "mode" -> {
                String m = str(k, v);
                if (!m.isEmpty() && !m.equals("nftables")) throw new ConfigException(k, m, "nftables (nftproxy implements nftables mode only)");
            }
            case "detectLocalMode" -> {
                String m = str(k, v);
                if (m.isEmpty()) break;
                b.detectLocal = new LocalDetection(m, b.detectLocal.bridgeInterface(), b.detectLocal.interfaceNamePrefix());
            }
            case "detectLocal" -> detectLocal(v, b);
            case "clientConnection" -> clientConnection(v, b);
            case "nftables" -> nftables(v, b);
            case "conntrack" -> conntrack(v, b);
            case "logging" -> logging(v, b);
            case "iptables", "ipvs", "winkernel" -> {
                obj(k, v);
                note(Level.DEBUG, k, "settings of kube-proxy's " + k + " mode; not used in nftables mode");
            }
            case "oomScoreAdj" -> {
                if (v.isNull()) break;
                if (!v.isIntegralNumber() || v.intValue() < -1000 || v.intValue() > 1000) throw new ConfigException(k, v, "an integer -1000..1000");
                if (v.intValue() != -999) {
                    note(Level.WARN, k, v.intValue() + " not applied: the daemon does not change its own OOM score; set "
                            + "OOMScoreAdjust= in the systemd unit (it sets kube-proxy's -999)");
                }
            }
            case "enableProfiling" -> {
                if (bool(k, v)) note(Level.WARN, k, "true not applied: nftproxy serves no /debug/pprof endpoints");
            }
            case "showHiddenMetricsForVersion" -> {
                if (!str(k, v).isEmpty()) note(Level.WARN, k, str(k, v) + " not applied: nftproxy has no hidden metrics");
            }
            case "featureGates" -> {
                if (!obj(k, v).isEmpty()) {
                    note(Level.WARN, k, String.join(",", v.propertyNames()) + " not applied: nftproxy has no feature gates; "
                            + "what it implements is always on");
                }
            }
            case "bindAddressHardFail" -> {
                bool(k, v);
                note(Level.DEBUG, k, "nftproxy always stops when it cannot bind a server address");
            }
            case "portRange", "udpIdleTimeout" -> {
                if (!str(k, v).isEmpty()) note(Level.INFO, k, "ignored: it belonged to kube-proxy's removed userspace mode");
            }
            case "windowsRunAsService" -> bool(k, v);
            case NFTPROXY_SECTION -> nftproxy(v, b);
            default -> throw unknown(k);
        }
    }

    /**
     * kube-proxy's defaulting of an empty bindAddress is 0.0.0.0; its family picks the servers' default addresses,
     * and an address that is not unspecified is this node's primary IP of its family (null: not given).
     */
    private static IpAddress bindAddress(JsonNode v) {
        String s = str("bindAddress", v);
        if (s.isEmpty()) return null;
        try {
            return IpAddress.parse(s);
        } catch (InvalidInputException e) {
            throw new ConfigException("bindAddress", s, "an IP address such as 0.0.0.0 or ::");
        }
    }

    /** The settings of the interface detectors; each is read only by the detectLocalMode of its name, as in kube-proxy. */
    private void detectLocal(JsonNode v, ProxyConfig.Builder b) {
        section("detectLocal", v, (key, f, x) -> {
            String s = str(f, x);
            LocalDetection d = b.detectLocal;
            switch (key) {
                case "bridgeInterface" -> b.detectLocal = new LocalDetection(d.mode(), s, d.interfaceNamePrefix());
                case "interfaceNamePrefix" -> b.detectLocal = new LocalDetection(d.mode(), d.bridgeInterface(), s);
                default -> throw unknown(f);
            }
        });
    }

    private void clientConnection(JsonNode v, ProxyConfig.Builder b) {
        section("clientConnection", v, (key, f, x) -> {
            switch (key) {
                case "kubeconfig" -> {
                    String s = str(f, x);
                    if (!s.isEmpty()) b.kubeconfig = Path.of(s);
                }
                case "acceptContentTypes", "contentType" -> {
                    if (!str(f, x).isEmpty()) note(Level.INFO, f, "ignored: nftproxy reads the API as JSON");
                }
                case "qps", "burst" -> {
                    if (!x.isNumber()) throw new ConfigException(f, x, "a number");
                    if (x.doubleValue() != 0) note(Level.INFO, f, "ignored: nftproxy lists once and then watches; it has no client-side rate limit");
                }
                default -> throw unknown(f);
            }
        });
    }

    /**
     * nftproxy's own settings, which have no KubeProxyConfiguration field. One top-level map under our name keeps
     * them apart from kube-proxy's fields; kube-proxy decodes its file leniently and ignores it, so going back to
     * kube-proxy with the same file works.
     */
    private void nftproxy(JsonNode v, ProxyConfig.Builder b) {
        section(NFTPROXY_SECTION, v, (key, f, x) -> {
            switch (key) {
                case "tableLayout" -> {
                    String s = str(f, x);
                    if (s.isEmpty()) break;
                    try {
                        b.tableLayout = TableLayout.parse(s);
                    } catch (IllegalArgumentException e) {
                        throw new ConfigException(f, "--table-layout", s, "flat, fast or upstream");
                    }
                }
                case "refuseExternalIPOverlaps" -> b.refuseExternalIPOverlaps = bool(f, x);
                default -> throw unknown(f);
            }
        });
    }

    private void nftables(JsonNode v, ProxyConfig.Builder b) {
        section("nftables", v, (key, f, x) -> {
            switch (key) {
                case "masqueradeAll" -> b.masqueradeAll = bool(f, x);
                case "masqueradeBit" -> {
                    if (x.isNull()) break;
                    if (!x.isIntegralNumber() || !x.canConvertToInt()) throw new ConfigException(f, x, "an integer 0..31");
                    b.masqueradeBit = x.intValue();
                }
                case "minSyncPeriod" -> setIfNonZero(f, x, d -> b.minSyncPeriod = d);
                case "syncPeriod" -> setIfNonZero(f, x, d -> b.syncPeriod = d);
                default -> throw unknown(f);
            }
        });
    }

    /**
     * The conntrack sysctls set at start, as kube-proxy's: a null or absent field keeps kube-proxy's default, an
     * explicit 0 leaves that sysctl as it is.
     */
    private void conntrack(JsonNode v, ProxyConfig.Builder b) {
        section("conntrack", v, (key, f, x) -> {
            if (x.isNull()) return;
            ConntrackSettings c = b.conntrack;
            b.conntrack = switch (key) {
                case "maxPerCore" -> c.withMaxPerCore(count(f, x));
                case "min" -> c.withMin(count(f, x));
                case "tcpEstablishedTimeout" -> c.withTcpEstablishedTimeout(duration(f, x));
                case "tcpCloseWaitTimeout" -> c.withTcpCloseWaitTimeout(duration(f, x));
                case "tcpBeLiberal" -> c.withTcpBeLiberal(bool(f, x));
                case "udpTimeout" -> c.withUdpTimeout(duration(f, x));
                case "udpStreamTimeout" -> c.withUdpStreamTimeout(duration(f, x));
                default -> throw unknown(f);
            };
        });
    }

    private static int count(String f, JsonNode x) {
        if (!x.isIntegralNumber() || !x.canConvertToInt()) throw new ConfigException(f, x, "an integer >= 0, or null");
        return x.intValue();
    }

    /** kube-proxy's logging options that mean something here: the format and the verbosity (flags override both). */
    private void logging(JsonNode v, ProxyConfig.Builder b) {
        section("logging", v, (key, f, x) -> {
            switch (key) {
                case "format" -> {
                    String s = str(f, x);
                    if (s.isEmpty()) break;
                    try {
                        b.logging = new LogSettings(b.logging.verbosity(), LogSettings.Format.parse(s));
                    } catch (IllegalArgumentException ex) {
                        throw new ConfigException(f, "--logging-format", s, "text or json");
                    }
                }
                case "verbosity" -> {
                    if (!x.isIntegralNumber() || !x.canConvertToInt()) throw new ConfigException(f, x, "an integer >= 0");
                    b.logging = new LogSettings(x.intValue(), b.logging.format());
                }
                case "flushFrequency", "options" -> note(Level.DEBUG, f, "nftproxy writes each line as it is logged");
                case "vmodule" -> {
                    if (!x.isNull() && !(x.isArray() && x.isEmpty())) {
                        note(Level.WARN, f, "not applied: nftproxy has one verbosity for all its code");
                    }
                }
                default -> throw unknown(f);
            }
        });
    }

    /** One member of a section: its key, its full field name ({@code section.key}) for messages, its value. */
    @FunctionalInterface
    private interface Member {
        void apply(String key, String field, JsonNode value);
    }

    /** Each member of map {@code name} (null: the file itself) parsed as its own field, so a bad one leaves the rest applied. */
    private void section(String name, JsonNode v, Member member) {
        for (Map.Entry<String, JsonNode> e : (name == null ? v : obj(name, v)).properties()) {
            field(() -> {
                member.apply(e.getKey(), name == null ? e.getKey() : name + "." + e.getKey(), e.getValue());
                return null;
            });
        }
    }

    /** Runs one field's parsing; a problem is kept for the file's one report and null returned. */
    private <T> T field(java.util.function.Supplier<T> parse) {
        try {
            return parse.get();
        } catch (ConfigException e) {
            errors.addAll(e.all());
            return null;
        }
    }

    private void note(Level level, String field, String text) { notes.add(new Note(level, field, text)); }

    private static void setIfNonZero(String field, JsonNode v, Consumer<Duration> set) {
        Duration d = duration(field, v);
        if (!d.isZero()) set.accept(d);
    }

    /** A Go duration; null and "" are zero, as kube-proxy's decoder leaves an absent duration. */
    private static Duration duration(String field, JsonNode v) {
        String s = str(field, v);
        return s.isEmpty() ? Duration.ZERO : GoDuration.parse(field, s);
    }

    private static ConfigException unknown(String f) {
        return ConfigException.about(f, "unknown field; allowed: a KubeProxyConfiguration field nftproxy knows (see docs/configuration.md)");
    }

    private static List<IpPrefix> cidrs(String field, String s) {
        List<IpPrefix> out = new ArrayList<>();
        if (s.isBlank()) return out;
        for (String part : s.split(",")) {
            try {
                out.add(IpPrefix.parse(part.strip()));
            } catch (InvalidInputException e) {
                throw new ConfigException(field, part, "comma-separated CIDRs such as 10.244.0.0/16,fd00:10:244::/56");
            }
        }
        return out;
    }

    private static NodePortAddresses nodePortAddresses(JsonNode v) {
        String field = "nodePortAddresses";
        if (v.isNull()) return NodePortAddresses.PRIMARY_IPS;
        if (!v.isArray()) throw new ConfigException(field, v, "a list of CIDRs, or [\"primary\"]");
        return NodePortAddresses.parse(field, "--nodeport-addresses", v.valueStream().map(x -> str(field, x)).toList());
    }

    /** Empty means kube-proxy's default for this server; otherwise {@link #hostPort}. */
    private static InetSocketAddress serverAddress(String field, String s, String defaultHost, int defaultPort) {
        return s.isEmpty() ? new InetSocketAddress(defaultHost, defaultPort) : hostPort(field, s, defaultPort);
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
        } else if (colon >= 0 && s.indexOf(':') == colon) {
            host = s.substring(0, colon);
            port = port(field, s.substring(colon + 1));
        }
        try {
            IpAddress.parse(host);
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
        if (!v.isObject()) throw new ConfigException(field, v, "a map");
        return v;
    }

    private static boolean bool(String field, JsonNode v) {
        if (!v.isBoolean()) throw new ConfigException(field, v, "true or false");
        return v.booleanValue();
    }

    private static String text(JsonNode root, String f) {
        JsonNode v = root.get(f);
        return v == null || !v.isString() ? null : v.stringValue();
    }

    private static String str(String field, JsonNode v) {
        if (v == null || v.isNull()) return "";
        if (!v.isString()) throw new ConfigException(field, v, "a string");
        return v.stringValue();
    }
}
