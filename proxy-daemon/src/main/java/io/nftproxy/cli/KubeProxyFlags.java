package io.nftproxy.cli;

import io.nftproxy.config.ConfigException;
import io.nftproxy.config.ConntrackSettings;
import io.nftproxy.config.GoDuration;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import picocli.CommandLine.Option;

import java.util.List;
import java.util.Map;

/**
 * kube-proxy's own flag spellings on {@code nftproxy run}, so a kube-proxy command line carries over: each is
 * accepted at the values nftproxy honours, and refused, with the reason, at a value it would not honour. The flags
 * of kube-proxy that have no meaning here are refused by name with the reason ({@link #NOT_APPLICABLE}). The flags
 * with an nftproxy equivalent under the same name ({@code --hostname-override}, {@code --cluster-cidr}, ...) live
 * on their commands; {@code --iptables-sync-period} and {@code --iptables-min-sync-period} are aliases there, as
 * kube-proxy 1.36 applies them to nftables mode too.
 */
final class KubeProxyFlags {
    /** kube-proxy 1.36 flags without a meaning in nftproxy, and why: what an operator should do instead. */
    static final Map<String, String> NOT_APPLICABLE = Map.ofEntries(
            Map.entry("--healthz-port", "removed in kube-proxy too; give --healthz-bind-address IP:PORT"),
            Map.entry("--metrics-port", "removed in kube-proxy too; give --metrics-bind-address IP:PORT"),
            Map.entry("--oom-score-adj", "the daemon does not change its own OOM score; set OOMScoreAdjust= in the systemd unit"),
            Map.entry("--feature-gates", "nftproxy has no feature gates; what it implements is always on"),
            Map.entry("--profiling", "nftproxy serves no /debug/pprof endpoints"),
            Map.entry("--show-hidden-metrics-for-version", "nftproxy has no hidden metrics"),
            Map.entry("--master", "give the API server in the kubeconfig (--kubeconfig)"),
            Map.entry("--kube-api-qps", "nftproxy lists once and then watches; it has no client-side rate limit"),
            Map.entry("--kube-api-burst", "nftproxy lists once and then watches; it has no client-side rate limit"),
            Map.entry("--kube-api-content-type", "nftproxy reads the API as JSON"),
            Map.entry("--config-sync-period", "nftproxy renews its watches on its own (every 5-10 min) and has no periodic re-delivery"),
            Map.entry("--iptables-masquerade-bit", "kube-proxy's iptables and ipvs modes only; nftables mode takes --masquerade-bit (nftables.masqueradeBit)"),
            Map.entry("--iptables-localhost-nodeports", "kube-proxy's iptables mode only; nftables mode never accepts NodePorts on 127.0.0.1"),
            Map.entry("--ipvs-scheduler", "kube-proxy's ipvs mode only"),
            Map.entry("--ipvs-sync-period", "kube-proxy's ipvs mode only; nftables mode takes --sync-period"),
            Map.entry("--ipvs-min-sync-period", "kube-proxy's ipvs mode only; nftables mode takes --min-sync-period"),
            Map.entry("--ipvs-exclude-cidrs", "kube-proxy's ipvs mode only"),
            Map.entry("--ipvs-strict-arp", "kube-proxy's ipvs mode only"),
            Map.entry("--ipvs-tcp-timeout", "kube-proxy's ipvs mode only"),
            Map.entry("--ipvs-tcpfin-timeout", "kube-proxy's ipvs mode only"),
            Map.entry("--ipvs-udp-timeout", "kube-proxy's ipvs mode only"),
            Map.entry("--vmodule", "nftproxy has one verbosity for all its code; give -v"),
            Map.entry("--log-flush-frequency", "nftproxy writes each line as it is logged"),
            Map.entry("--log-json-info-buffer-size", "nftproxy writes each line as it is logged"),
            Map.entry("--log-text-info-buffer-size", "nftproxy writes each line as it is logged"),
            Map.entry("--log-json-split-stream", "every line goes to stderr"),
            Map.entry("--log-text-split-stream", "every line goes to stderr"));

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

    /** Takes the value, if any, of every not-applicable flag, so that {@link #check} can name the one given. */
    @Option(names = {"--healthz-port", "--metrics-port", "--oom-score-adj", "--feature-gates",
            "--show-hidden-metrics-for-version", "--master", "--kube-api-qps", "--kube-api-burst",
            "--kube-api-content-type", "--config-sync-period", "--iptables-masquerade-bit", "--ipvs-scheduler",
            "--ipvs-sync-period", "--ipvs-min-sync-period", "--ipvs-exclude-cidrs", "--ipvs-tcp-timeout",
            "--ipvs-tcpfin-timeout", "--ipvs-udp-timeout", "--vmodule", "--log-flush-frequency", "--log-json-info-buffer-size", "--log-text-info-buffer-size"},
            hidden = true, paramLabel = "VALUE")
    List<String> notApplicableValued;

    @Option(names = {"--profiling", "--iptables-localhost-nodeports", "--ipvs-strict-arp", "--log-json-split-stream",
            "--log-text-split-stream"}, arity = "0..1", fallbackValue = "true", hidden = true)
    List<String> notApplicableSwitches;

    /**
     * Refuses what nftproxy would not honour, naming the flag and why.
     *
     * @param args the command line as given, to tell which of the not-applicable flags it was
     */
    void check(List<String> args) {
        for (String a : args) {
            String name = a.split("=", 2)[0];
            String why = NOT_APPLICABLE.get(name);
            if (why != null) throw new ConfigException(name, "(given)", "not given: " + why);
        }
        if (proxyMode != null && !proxyMode.equals("nftables")) {
            throw new ConfigException("--proxy-mode", proxyMode, "nftables (nftproxy implements kube-proxy's nftables mode only)");
        }
    }

    /** The flags given, over the file's values in {@code b}; parsed here, checked by the configuration's validate. */
    void applyTo(ProxyConfig.Builder b) {
        if (bindAddress != null) {
            try {
                b.bindAddress = IpAddress.parse(bindAddress);
            } catch (InvalidInputException e) {
                throw new ConfigException("--bind-address", bindAddress, "an IP address such as 0.0.0.0 or 192.168.10.20");
            }
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

}
