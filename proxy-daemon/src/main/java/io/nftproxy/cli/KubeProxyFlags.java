package io.nftproxy.cli;

import io.nftproxy.config.ConfigException;
import io.nftproxy.config.GoDuration;
import picocli.CommandLine.Option;

import java.time.Duration;
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
            Map.entry("--bind-address", "nftproxy does not take the node's primary IP from it; give --node-ip"),
            Map.entry("--healthz-port", "removed in kube-proxy too; give --healthz-bind-address IP:PORT"),
            Map.entry("--metrics-port", "removed in kube-proxy too; give --metrics-bind-address IP:PORT"),
            Map.entry("--oom-score-adj", "the daemon does not change its own OOM score; set OOMScoreAdjust= in the systemd unit"),
            Map.entry("--feature-gates", "nftproxy has no feature gates; what it implements is always on"),
            Map.entry("--profiling", "nftproxy serves no /debug/pprof endpoints"),
            Map.entry("--show-hidden-metrics-for-version", "nftproxy has no hidden metrics"),
            Map.entry("--write-config-to", "not implemented; the effective configuration is in the start line"),
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
            Map.entry("--pod-bridge-interface", "the BridgeInterface detector is not implemented; --detect-local-mode ClusterCIDR only"),
            Map.entry("--pod-interface-name-prefix", "the InterfaceNamePrefix detector is not implemented; --detect-local-mode ClusterCIDR only"),
            Map.entry("--vmodule", "nftproxy has one verbosity for all its code; give -v"),
            Map.entry("--log-flush-frequency", "nftproxy writes each line as it is logged"),
            Map.entry("--log-json-info-buffer-size", "nftproxy writes each line as it is logged"),
            Map.entry("--log-text-info-buffer-size", "nftproxy writes each line as it is logged"),
            Map.entry("--log-json-split-stream", "every line goes to stderr"),
            Map.entry("--log-text-split-stream", "every line goes to stderr"));

    private static final String CONNTRACK = "nftproxy sets no conntrack sysctls; set net.netfilter.nf_conntrack_* on "
            + "the node instead (docs/migrating-from-kube-proxy.md)";

    @Option(names = "--proxy-mode", paramLabel = "nftables",
            description = {"kube-proxy's proxy mode; nftables is the one nftproxy implements (anything else is refused)."})
    String proxyMode;

    @Option(names = "--detect-local-mode", paramLabel = "ClusterCIDR",
            description = {"How pod traffic is recognised: ClusterCIDR (from --cluster-cidr), the only detector implemented."})
    String detectLocalMode;

    @Option(names = "--conntrack-max-per-core", paramLabel = "N", hidden = true)
    Integer conntrackMaxPerCore;

    @Option(names = "--conntrack-min", paramLabel = "N", hidden = true)
    Integer conntrackMin;

    @Option(names = "--conntrack-tcp-timeout-established", paramLabel = "DURATION", hidden = true)
    String conntrackTcpEstablished;

    @Option(names = "--conntrack-tcp-timeout-close-wait", paramLabel = "DURATION", hidden = true)
    String conntrackTcpCloseWait;

    @Option(names = "--conntrack-tcp-be-liberal", arity = "0..1", fallbackValue = "true", hidden = true)
    Boolean conntrackTcpBeLiberal;

    @Option(names = "--conntrack-udp-timeout", paramLabel = "DURATION", hidden = true)
    String conntrackUdpTimeout;

    @Option(names = "--conntrack-udp-timeout-stream", paramLabel = "DURATION", hidden = true)
    String conntrackUdpStreamTimeout;

    /** Takes the value, if any, of every not-applicable flag, so that {@link #check} can name the one given. */
    @Option(names = {"--bind-address", "--healthz-port", "--metrics-port", "--oom-score-adj", "--feature-gates",
            "--show-hidden-metrics-for-version", "--write-config-to", "--master", "--kube-api-qps", "--kube-api-burst",
            "--kube-api-content-type", "--config-sync-period", "--iptables-masquerade-bit", "--ipvs-scheduler",
            "--ipvs-sync-period", "--ipvs-min-sync-period", "--ipvs-exclude-cidrs", "--ipvs-tcp-timeout",
            "--ipvs-tcpfin-timeout", "--ipvs-udp-timeout", "--pod-bridge-interface", "--pod-interface-name-prefix",
            "--vmodule", "--log-flush-frequency", "--log-json-info-buffer-size", "--log-text-info-buffer-size"},
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
            String name = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
            String why = NOT_APPLICABLE.get(name);
            if (why != null && name.startsWith("--")) throw new ConfigException(name, "(given)", "not given: " + why);
        }
        if (proxyMode != null && !proxyMode.equals("nftables")) {
            throw new ConfigException("--proxy-mode", proxyMode, "nftables (nftproxy implements kube-proxy's nftables mode only)");
        }
        if (detectLocalMode != null && !detectLocalMode.equals("ClusterCIDR")) {
            String why = List.of("NodeCIDR", "BridgeInterface", "InterfaceNamePrefix").contains(detectLocalMode)
                    ? "ClusterCIDR (the " + detectLocalMode + " detector is not implemented)" : "ClusterCIDR";
            throw new ConfigException("--detect-local-mode", detectLocalMode, why);
        }
        // kube-proxy's "leave it as it is" values are what nftproxy does, so they pass; anything else asks for a sysctl.
        if (conntrackMaxPerCore != null && conntrackMaxPerCore != 0) {
            throw new ConfigException("--conntrack-max-per-core", conntrackMaxPerCore, "0 (leave the limit as it is): " + CONNTRACK);
        }
        if (conntrackMin != null && conntrackMaxPerCore == null) {
            throw new ConfigException("--conntrack-min", conntrackMin, "only with --conntrack-max-per-core=0, which ignores it: " + CONNTRACK);
        }
        zeroDuration("--conntrack-tcp-timeout-established", conntrackTcpEstablished);
        zeroDuration("--conntrack-tcp-timeout-close-wait", conntrackTcpCloseWait);
        zeroDuration("--conntrack-udp-timeout", conntrackUdpTimeout);
        zeroDuration("--conntrack-udp-timeout-stream", conntrackUdpStreamTimeout);
        if (Boolean.TRUE.equals(conntrackTcpBeLiberal)) {
            throw new ConfigException("--conntrack-tcp-be-liberal", true, "false: " + CONNTRACK);
        }
    }

    private static void zeroDuration(String flag, String value) {
        if (value == null) return;
        Duration d = GoDuration.parse(flag, value);
        if (!d.isZero()) throw new ConfigException(flag, value, "0 (leave the timeout as it is): " + CONNTRACK);
    }
}
