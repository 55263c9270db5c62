package io.nftproxy.cli;

import io.nftproxy.config.ConfigException;
import io.nftproxy.config.ConfigFile;
import io.nftproxy.config.GoDuration;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.logging.LogSettings;
import io.nftproxy.node.NodeSettings;
import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.proxy.NodeContext;
import picocli.CommandLine.ParseResult;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The configuration of {@code nftproxy run}, daemon and {@code --once} alike: defaults, then {@code --config}, then
 * each flag the command line actually gave, validated once. One place, so that what the daemon refuses the one-shot
 * refuses too, and what the file sets applies to both.
 *
 * @param notes what the file said that is not simply applied, to be logged once logging is set up from the result
 */
record RunConfiguration(ProxyConfig config, NodeSettings node, List<ConfigFile.Note> notes) {
    RunConfiguration {
        notes = List.copyOf(notes);
    }

    /**
     * @throws ConfigException a flag or a field of the file is invalid (exit code 2)
     * @throws IOException     the file cannot be read (exit code 1)
     */
    static RunConfiguration of(RunCommand cmd, ParseResult pr) throws IOException {
        cmd.kubeProxyFlags.check(pr.originalArgs());
        List<ConfigFile.Note> notes = new ArrayList<>();
        ProxyConfig base = ProxyConfig.defaults();
        if (cmd.config != null) {
            ConfigFile.Result r = ConfigFile.read(cmd.config, base);
            notes.addAll(r.notes());
            base = r.config();
        }
        ProxyConfig.Builder b = base.toBuilder();
        NodeOptions n = cmd.nodeOptions;
        if (pr.hasMatchedOption("--hostname-override")) b.hostnameOverride = n.hostname;
        if (pr.hasMatchedOption("--cluster-cidr")) b.clusterCidrs = n.clusterCidrs;
        if (pr.hasMatchedOption("--nodeport-addresses")) b.nodePortAddresses = n.nodePortAddresses;
        if (pr.hasMatchedOption("--masquerade-all")) b.masqueradeAll = n.masqueradeAll;
        if (pr.hasMatchedOption("--masquerade-bit")) b.masqueradeBit = n.masqueradeBit;
        if (pr.hasMatchedOption("--manifests")) {
            b.manifests = n.manifests;
            // The source given on the command line wins over the file's, as any flag does: kubeadm's file names a
            // kubeconfig, and it must still load unchanged next to --manifests. Both as flags stays a conflict.
            if (b.kubeconfig != null && cmd.kubeconfig == null) {
                notes.add(new ConfigFile.Note(org.slf4j.event.Level.INFO, "clientConnection.kubeconfig",
                        b.kubeconfig + " not used: --manifests " + n.manifests + " is the source"));
                b.kubeconfig = null;
            }
        }
        if (cmd.kubeconfig != null) b.kubeconfig = cmd.kubeconfig;
        if (cmd.healthzBindAddress != null) {
            b.healthzBindAddress = ConfigFile.hostPort("--healthz-bind-address", cmd.healthzBindAddress, ConfigFile.HEALTHZ_PORT);
        }
        if (cmd.metricsBindAddress != null) {
            b.metricsBindAddress = ConfigFile.hostPort("--metrics-bind-address", cmd.metricsBindAddress, ConfigFile.METRICS_PORT);
        }
        if (cmd.minSyncPeriod != null) b.minSyncPeriod = GoDuration.parse("--min-sync-period", cmd.minSyncPeriod);
        if (cmd.syncPeriod != null) b.syncPeriod = GoDuration.parse("--sync-period", cmd.syncPeriod);
        b.nftMode = cmd.nftMode.flagValue();
        if (cmd.verbosity != null) {
            if (cmd.verbosity < 0) throw new ConfigException("-v", cmd.verbosity, "an integer 0 or more");
            b.logging = new LogSettings(cmd.verbosity, b.logging.format());
        }
        if (cmd.loggingFormat != null) {
            try {
                b.logging = new LogSettings(b.logging.verbosity(), LogSettings.Format.parse(cmd.loggingFormat));
            } catch (IllegalArgumentException e) {
                throw new ConfigException("--logging-format", cmd.loggingFormat, "text or json");
            }
        }
        cmd.kubeProxyFlags.applyTo(b);
        b.detectLocal = cmd.localDetector.over(b.detectLocal);
        if (b.hostnameOverride == null) b.hostnameOverride = osHostname();
        ProxyConfig c = b.build().validate();
        try {
            NodeContext.minimal(c.hostnameOverride());
        } catch (InvalidInputException e) {
            throw new ConfigException("hostnameOverride", c.hostnameOverride(), "a DNS-1123 subdomain (the node's name)");
        }
        for (IpFamily f : IpFamily.values()) {
            if (n.nodeIPs.stream().filter(a -> a.family() == f).count() > 1) {
                throw new ConfigException("--node-ip", String.join(",", n.nodeIPs.stream().map(IpAddress::toString).toList()),
                        "at most one address per family");
            }
        }
        NodeSettings node = new NodeSettings(c.hostnameOverride(), n.nodeIPs, c.clusterCidrs(), c.nodePortAddresses(),
                c.masqueradeAll(), c.masqueradeBit(), c.bindAddress(), c.detectLocal());
        return new RunConfiguration(c, node, notes);
    }

    /** As kube-proxy: the kernel's host name, lower-cased, when no override is given. */
    private static String osHostname() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip().toLowerCase(Locale.ROOT);
        } catch (IOException e) {
            return null;
        }
    }
}
