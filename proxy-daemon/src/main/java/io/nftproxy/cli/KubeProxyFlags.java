package io.nftproxy.cli;

import io.nftproxy.config.ConfigException;
import io.nftproxy.config.ConfigFile;
import io.nftproxy.config.ConntrackSettings;
import io.nftproxy.config.GoDuration;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import org.slf4j.event.Level;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * kube-proxy's own flag spellings on {@code nftproxy run} (and on {@code nftproxy} with no subcommand, kube-proxy's
 * own command shape), so a kube-proxy command line carries over: each is accepted at the values nftproxy honours,
 * and refused, with the reason, at a value it would not honour. kube-proxy 1.36's flags that change nothing a
 * service proxy does here are accepted at any value, each with one WARN saying what it does not do here
 * ({@link #IGNORED}). The flags with an nftproxy equivalent under the same name ({@code --hostname-override},
 * {@code --cluster-cidr}, ...) live on their commands; {@code --iptables-sync-period} and
 * {@code --iptables-min-sync-period} are aliases there, as kube-proxy 1.36 applies them to nftables mode too.
 */
final class KubeProxyFlags {
    private static final String IPVS_ONLY = "kube-proxy's ipvs mode only; its nftables mode ignores it too";

    /**
     * kube-proxy 1.36 flags (and {@code --logtostderr}, which older distribution units still pass) accepted at any
     * value and ignored, each with why it changes nothing here and, where there is one, what does that here.
     * Ignoring them is safe: none changes which packets go where.
     */
    static final Map<String, String> IGNORED = Map.ofEntries(
            Map.entry("--oom-score-adj", "the daemon does not change its own OOM score (kube-proxy sets -999 on itself); "
                    + "under systemd set OOMScoreAdjust= in the unit"),
            Map.entry("--profiling", "nftproxy serves no /debug/pprof endpoints"),
            Map.entry("--feature-gates", "nftproxy has no feature gates; what it implements is always on"),
            Map.entry("--show-hidden-metrics-for-version", "nftproxy has no hidden metrics"),
            Map.entry("--kube-api-qps", "nftproxy lists once and then watches; it has no client-side rate limit"),
            Map.entry("--kube-api-burst", "nftproxy lists once and then watches; it has no client-side rate limit"),
            Map.entry("--kube-api-content-type", "nftproxy reads the API as JSON"),
            Map.entry("--config-sync-period", "nftproxy renews its watches every 5-10 min and lists again after a lost "
                    + "watch, which is what the periodic re-delivery was for"),
            Map.entry("--iptables-masquerade-bit", "kube-proxy's iptables and ipvs modes only, its nftables mode ignores it "
                    + "too; the bit here is nftables.masqueradeBit in --config, or --masquerade-bit"),
            Map.entry("--iptables-localhost-nodeports", "kube-proxy's iptables mode only; nftables mode never accepts "
                    + "NodePorts on 127.0.0.1"),
            Map.entry("--ipvs-scheduler", IPVS_ONLY),
            Map.entry("--ipvs-sync-period", IPVS_ONLY + "; nftables mode takes --sync-period"),
            Map.entry("--ipvs-min-sync-period", IPVS_ONLY + "; nftables mode takes --min-sync-period"),
            Map.entry("--ipvs-exclude-cidrs", IPVS_ONLY),
            Map.entry("--ipvs-strict-arp", IPVS_ONLY),
            Map.entry("--ipvs-tcp-timeout", IPVS_ONLY),
            Map.entry("--ipvs-tcpfin-timeout", IPVS_ONLY),
            Map.entry("--ipvs-udp-timeout", IPVS_ONLY),
            Map.entry("--vmodule", "nftproxy has one verbosity for all its code; give -v"),
            Map.entry("--log-flush-frequency", "nftproxy writes each line as it is logged"),
            Map.entry("--log-json-info-buffer-size", "nftproxy writes each line as it is logged"),
            Map.entry("--log-text-info-buffer-size", "nftproxy writes each line as it is logged"),
            Map.entry("--log-json-split-stream", "every line goes to stderr"),
            Map.entry("--log-text-split-stream", "every line goes to stderr"),
            Map.entry("--logtostderr", "removed from kube-proxy in 1.26; every line goes to stderr"));

    @Option(names = "--proxy-mode", paramLabel = "nftables",
            description = {"kube-proxy's proxy mode; nftables is the one nftproxy implements (anything else is refused)."})
    String proxyMode;

    @Option(names = "--bind-address", paramLabel = "IP",
            description = {"As kube-proxy's: an address that is not 0.0.0.0 or :: is this node's primary IP of its "
                    + "family and the primary family (over --node-ip and the Node object's addresses), as in "
                    + "kube-proxy's nftables mode. Default: 0.0.0.0, or bindAddress from --config."})
    String bindAddress;

    @Option(names = "--conntrack-max-per-core", paramLabel = "N",
            description = {"nf_conntrack_max is N times the CPUs, capped at 1048576 as in kube-proxy 1.36 (at least "
                    + "--conntrack-min); 0 leaves it alone. Default: 32768."})
    Integer conntrackMaxPerCore;

    @Option(names = "--conntrack-min", paramLabel = "N",
            description = {"The least nf_conntrack_max set from --conntrack-max-per-core. Default: 131072."})
    Integer conntrackMin;

    @Option(names = "--conntrack-tcp-timeout-established", paramLabel = "DURATION",
            description = {"nf_conntrack_tcp_timeout_established; 0 leaves it alone. Default: 24h."})
    String conntrackTcpEstablished;

    @Option(names = "--conntrack-tcp-timeout-close-wait", paramLabel = "DURATION",
            description = {"nf_conntrack_tcp_timeout_close_wait; 0 leaves it alone. Default: 1h."})
    String conntrackTcpCloseWait;

    @Option(names = "--conntrack-tcp-be-liberal", arity = "0..1", fallbackValue = "true",
            description = {"Set nf_conntrack_tcp_be_liberal to 1 (false leaves it alone). Default: false."})
    Boolean conntrackTcpBeLiberal;

    @Option(names = "--conntrack-udp-timeout", paramLabel = "DURATION",
            description = {"nf_conntrack_udp_timeout; 0 leaves it alone. Default: 0."})
    String conntrackUdpTimeout;

    @Option(names = "--conntrack-udp-timeout-stream", paramLabel = "DURATION",
            description = {"nf_conntrack_udp_timeout_stream; 0 leaves it alone. Default: 0."})
    String conntrackUdpStreamTimeout;

    @Option(names = "--write-config-to", paramLabel = "FILE",
            description = {"Write the effective configuration (defaults, --config, flags) to FILE as a "
                    + "KubeProxyConfiguration and exit; --config FILE reads it back to the same configuration."})
    java.nio.file.Path writeConfigTo;

    @Option(names = "--bind-address-hard-fail", arity = "0..1", fallbackValue = "true", paramLabel = "true|false",
            description = {"As kube-proxy's, but nftproxy always stops when it cannot bind a server address: true is "
                    + "what it does; false is accepted with a warning that it changes nothing."})
    Boolean bindAddressHardFail;

    @Option(names = "--master", paramLabel = "URL",
            description = {"As kube-proxy's: the API server's URL (http:// or https://), over the server of "
                    + "--kubeconfig (its credentials and CA are kept); without a kubeconfig, that URL with no "
                    + "credentials. Not together with --manifests."})
    String master;

    @Option(names = "--healthz-port", paramLabel = "PORT",
            description = {"Deprecated in kube-proxy: the port of --healthz-bind-address (0 disables the server); "
                    + "--healthz-bind-address given with a port wins."})
    Integer healthzPort;

    @Option(names = "--metrics-port", paramLabel = "PORT",
            description = {"Deprecated in kube-proxy: the port of --metrics-bind-address (0 disables the server); "
                    + "--metrics-bind-address given with a port wins."})
    Integer metricsPort;

    /** Takes the value of every ignored flag that has one, so that {@link #notes} can name the one given. */
    @Option(names = {"--oom-score-adj", "--feature-gates", "--show-hidden-metrics-for-version", "--kube-api-qps",
            "--kube-api-burst", "--kube-api-content-type", "--config-sync-period", "--iptables-masquerade-bit",
            "--ipvs-scheduler", "--ipvs-sync-period", "--ipvs-min-sync-period", "--ipvs-exclude-cidrs",
            "--ipvs-tcp-timeout", "--ipvs-tcpfin-timeout", "--ipvs-udp-timeout", "--vmodule", "--log-flush-frequency",
            "--log-json-info-buffer-size", "--log-text-info-buffer-size"},
            hidden = true, paramLabel = "VALUE")
    List<String> ignoredValued;

    @Option(names = {"--profiling", "--iptables-localhost-nodeports", "--ipvs-strict-arp", "--log-json-split-stream",
            "--log-text-split-stream", "--logtostderr"}, arity = "0..1", fallbackValue = "true", hidden = true)
    List<String> ignoredSwitches;

    /**
     * Refuses what nftproxy would not honour, naming the flag and why.
     */
    void check() {
        if (proxyMode != null && !proxyMode.equals("nftables")) {
            throw new ConfigException("--proxy-mode", proxyMode, "nftables (nftproxy implements kube-proxy's nftables mode only)");
        }
        if (master != null) masterUrl();
    }

    /**
     * One WARN for each ignored flag given, saying what it does not do here; and for {@code --bind-address-hard-fail=false}.
     *
     * @param args the command line as given, to tell which of the ignored flags it was
     */
    List<ConfigFile.Note> notes(List<String> args) {
        List<ConfigFile.Note> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (String a : args) {
            String name = a.split("=", 2)[0];
            String why = IGNORED.get(name);
            if (why != null && seen.add(name)) out.add(new ConfigFile.Note(Level.WARN, name, "ignored: " + why));
        }
        if (Boolean.FALSE.equals(bindAddressHardFail)) {
            out.add(new ConfigFile.Note(Level.WARN, "--bind-address-hard-fail", "false changes nothing: nftproxy always "
                    + "stops when it cannot bind a server address"));
        }
        if (master != null) out.add(new ConfigFile.Note(Level.INFO, "--master", masterUrl() + " is the API server"));
        return out;
    }

    /** {@code --master} parsed, or a refusal naming what is allowed. */
    java.net.URI masterUrl() {
        try {
            java.net.URI u = new java.net.URI(master);
            if (("http".equals(u.getScheme()) || "https".equals(u.getScheme())) && u.getHost() != null) return u;
        } catch (java.net.URISyntaxException e) {
            // refused below, in the same words as a URL without a scheme
        }
        throw new ConfigException("--master", master, "the API server's URL, such as https://192.168.10.1:6443");
    }

    /** The flags given, over the file's values in {@code b}; parsed here, checked by the configuration's validate. */
    void applyTo(ProxyConfig.Builder b, boolean healthzBindAddressGiven, boolean metricsBindAddressGiven) {
        if (bindAddress != null) {
            try {
                b.bindAddress = IpAddress.parse(bindAddress);
            } catch (InvalidInputException e) {
                throw new ConfigException("--bind-address", bindAddress, "an IP address such as 0.0.0.0 or 192.168.10.20");
            }
        }
        if (healthzPort != null && !healthzBindAddressGiven) b.healthzBindAddress = withPort("--healthz-port", b.healthzBindAddress, healthzPort);
        if (metricsPort != null && !metricsBindAddressGiven) b.metricsBindAddress = withPort("--metrics-port", b.metricsBindAddress, metricsPort);
        if (master != null && b.manifests != null) {
            throw new ConfigException("--master", master, "not with --manifests: the API server or a manifest directory, not both");
        }
        ConntrackSettings c = b.conntrack;
        if (conntrackMaxPerCore != null) c = c.withMaxPerCore(conntrackMaxPerCore);
        if (conntrackMin != null) c = c.withMin(conntrackMin);
        if (conntrackTcpEstablished != null) c = c.withTcpEstablishedTimeout(GoDuration.parse("--conntrack-tcp-timeout-established", conntrackTcpEstablished));
        if (conntrackTcpCloseWait != null) c = c.withTcpCloseWaitTimeout(GoDuration.parse("--conntrack-tcp-timeout-close-wait", conntrackTcpCloseWait));
        if (conntrackTcpBeLiberal != null) c = c.withTcpBeLiberal(conntrackTcpBeLiberal);
        if (conntrackUdpTimeout != null) c = c.withUdpTimeout(GoDuration.parse("--conntrack-udp-timeout", conntrackUdpTimeout));
        if (conntrackUdpStreamTimeout != null) c = c.withUdpStreamTimeout(GoDuration.parse("--conntrack-udp-timeout-stream", conntrackUdpStreamTimeout));
        b.conntrack = c;
    }

    private static java.net.InetSocketAddress withPort(String flag, java.net.InetSocketAddress at, int port) {
        if (port < 0 || port > 65535) throw new ConfigException(flag, port, "a port 0..65535 (0 disables the server)");
        return new java.net.InetSocketAddress(at.getAddress(), port);
    }
}
