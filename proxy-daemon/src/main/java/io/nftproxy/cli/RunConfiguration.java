package io.nftproxy.cli;

import io.nftproxy.config.ConfigException;
import io.nftproxy.config.ConfigFile;
import io.nftproxy.config.GoDuration;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.logging.LogSettings;
import picocli.CommandLine.ParseResult;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The configuration of {@code nftproxy run}, daemon and {@code --once} alike: defaults, then {@code --config}, then
 * each flag the command line actually gave, into one {@link ProxyConfig.Builder}, validated once. One place, so
 * that what the daemon refuses the one-shot refuses too, and what the file sets applies to both.
 *
 * @param notes what the file said that is not simply applied, to be logged once logging is set up from the result
 */
record RunConfiguration(ProxyConfig config, List<ConfigFile.Note> notes) {
    /**
     * @throws ConfigException a flag or a field of the file is invalid (exit code 2)
     * @throws IOException     the file cannot be read (exit code 1)
     */
    static RunConfiguration of(RunCommand cmd, ParseResult pr) throws IOException {
        List<ConfigFile.Note> notes = new ArrayList<>(cmd.kubeProxyFlags.notes(pr.originalArgs()));
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        // Every step keeps its problem and the next runs regardless: validate() reports them all with the rules the
        // values break (the host name among them), so one run names everything to fix (issue 24).
        collect(b, cmd.kubeProxyFlags::check);
        if (cmd.config != null) collect(b, () -> notes.addAll(ConfigFile.read(cmd.config, b)));
        collect(b, () -> cmd.nodeOptions.overlay(b, pr));
        // The source given on the command line wins over the file's, as any flag does: kubeadm's file names a
        // kubeconfig, and it must still load unchanged next to --manifests. Both as flags stays a conflict.
        if (pr.hasMatchedOption("--manifests") && b.kubeconfig != null && cmd.kubeconfig == null) {
            notes.add(new ConfigFile.Note(org.slf4j.event.Level.INFO, "clientConnection.kubeconfig",
                    b.kubeconfig + " not used: --manifests " + b.manifests + " is the source"));
            b.kubeconfig = null;
        }
        if (cmd.kubeconfig != null) b.kubeconfig = cmd.kubeconfig;
        if (cmd.healthzBindAddress != null) {
            collect(b, () -> b.healthzBindAddress = ConfigFile.hostPort("--healthz-bind-address", cmd.healthzBindAddress, ConfigFile.HEALTHZ_PORT));
        }
        if (cmd.metricsBindAddress != null) {
            collect(b, () -> b.metricsBindAddress = ConfigFile.hostPort("--metrics-bind-address", cmd.metricsBindAddress, ConfigFile.METRICS_PORT));
        }
        if (cmd.minSyncPeriod != null) collect(b, () -> b.minSyncPeriod = GoDuration.parse("--min-sync-period", cmd.minSyncPeriod));
        if (cmd.syncPeriod != null) collect(b, () -> b.syncPeriod = GoDuration.parse("--sync-period", cmd.syncPeriod));
        b.nftMode = cmd.nftMode;
        if (cmd.verbosity != null) b.logging = new LogSettings(cmd.verbosity, b.logging.format());
        if (cmd.loggingFormat != null) {
            try {
                b.logging = new LogSettings(b.logging.verbosity(), LogSettings.Format.parse(cmd.loggingFormat));
            } catch (IllegalArgumentException e) {
                b.problem(new ConfigException("logging.format", "--logging-format", cmd.loggingFormat, "text or json"));
            }
        }
        collect(b, () -> cmd.kubeProxyFlags.applyTo(b, cmd.healthzBindAddress != null, cmd.metricsBindAddress != null));
        collect(b, () -> b.detectLocal = cmd.localDetector.over(b.detectLocal));
        if (b.hostnameOverride == null) b.hostnameOverride = osHostname();
        return new RunConfiguration(b.validate(), notes);
    }

    /** A step that parses some values into {@code b}; what it refuses is kept for {@code b.validate()}'s one report. */
    private static void collect(ProxyConfig.Builder b, IoStep step) throws IOException {
        try {
            step.run();
        } catch (ConfigException e) {
            b.problem(e);
        }
    }

    @FunctionalInterface
    private interface IoStep {
        void run() throws IOException;
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
