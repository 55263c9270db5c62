package io.nftproxy.cli;

import io.nftproxy.config.ConfigException;
import io.nftproxy.config.ConfigFile;
import io.nftproxy.config.GoDuration;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.daemon.ProxyDaemon;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.node.NodeSettings;
import io.nftproxy.proxy.InvalidInputException;
import io.nftproxy.proxy.NodeContext;
import io.nftproxy.source.KubernetesSource;
import io.nftproxy.source.api.ApiServer;
import io.nftproxy.source.ManifestDirectorySource;
import io.nftproxy.systemd.SdNotify;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParseResult;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;

/**
 * {@code nftproxy run} without {@code --once}: builds the configuration (defaults, then --config, then flags given
 * explicitly), opens nftables, starts the daemon on the chosen source and runs until SIGTERM.
 */
final class DaemonLauncher {
    private static final Logger LOG = LoggerFactory.getLogger(DaemonLauncher.class);

    private final RunCommand cmd;
    private final CommandSpec spec;

    DaemonLauncher(RunCommand cmd, CommandSpec spec) {
        this.cmd = cmd;
        this.spec = spec;
    }

    int run(PrintWriter err) {
        ProxyConfig config;
        try {
            config = configuration();
        } catch (ConfigException e) {
            err.println("nftproxy: invalid configuration: " + e.getMessage());
            return ExitCodes.USAGE;
        } catch (IOException e) {
            err.println("nftproxy: --config " + cmd.config + ": cannot be read (" + e.getMessage() + ")");
            return ExitCodes.INPUT_UNREADABLE;
        }
        NodeSettings node = new NodeSettings(config.hostnameOverride(), cmd.nodeOptions.nodeIPs, config.clusterCidrs(),
                config.nodePortAddresses(), config.masqueradeAll(), config.masqueradeBit());
        OwnProcesses own = OwnProcesses.thisProcess();
        NftClient client;
        try {
            NftClients.Selection sel = cmd.clients().open(cmd.nftMode, cmd.netns, own::registerChild);
            client = sel.client();
            LOG.info("{}", sel.reason());
            try (LongWait w = LongWait.warnAfter(Duration.ofSeconds(5), "nft has not answered the start-up probe for 5 s ("
                    + client.describe() + "); still waiting, up to the nft timeout; the health server starts after it",
                    LOG::warn)) {
                client.capabilities();
            }
        } catch (NftException e) {
            err.println("nftproxy: nft unavailable: " + e.getMessage());
            return e.isPermission() ? ExitCodes.PERMISSION_DENIED : ExitCodes.NFT_UNAVAILABLE;
        } catch (IOException | RuntimeException e) {
            err.println("nftproxy: cannot open nft: " + e.getMessage());
            return ExitCodes.NFT_UNAVAILABLE;
        }
        ProxyDaemon daemon = new ProxyDaemon(new ProxyDaemon.Options(config, node, cmd.netns, config.manifests() != null,
                cmd.nodeOptions.tableLayout()),
                client, own, SdNotify.fromEnvironment(), Clock.systemUTC());
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            LOG.info("SIGTERM: stopping; nftables rules stay in place");
            daemon.close();
            stopped.countDown();
        }, "shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            daemon.start(source(config));
            LOG.info("running node={} source={} healthz={} metrics={} minSyncPeriod={} syncPeriod={}", config.hostnameOverride(),
                    config.manifests() != null ? "manifests:" + config.manifests() : "kubernetes",
                    config.healthzBindAddress(), config.metricsBindAddress(), GoDuration.format(config.minSyncPeriod()),
                    GoDuration.format(config.syncPeriod()));
            stopped.await();
            return ExitCodes.OK;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ExitCodes.OK;
        } catch (Exception e) {
            // Our own start errors (a bind, the namespace lock) say what and where in their message; the class
            // name would only hide it.
            err.println("nftproxy: cannot start: " + (e instanceof IOException && e.getMessage() != null ? e.getMessage() : e));
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException ignored) {
                // already shutting down
            }
            daemon.close();
            return ExitCodes.INPUT_UNREADABLE;
        }
    }

    private ProxyDaemon.SourceStarter source(ProxyConfig config) {
        if (config.manifests() != null) {
            return store -> new ManifestDirectorySource(config.manifests(), store, Duration.ofMillis(200));
        }
        return store -> {
            ApiServer api = apiServer(config);
            KubernetesSource src = new KubernetesSource(api, store);
            src.start(config.hostnameOverride());
            LOG.info("watching the API server url={}", api.url());
            return src;
        };
    }

    /** The API server's connection; TLS verification is never turned off silently. */
    static ApiServer apiServer(ProxyConfig config) {
        ApiServer api = config.kubeconfig() != null ? ApiServer.fromKubeconfig(config.kubeconfig()) : ApiServer.autoConfigured();
        if (api.insecure()) {
            LOG.warn("the kubeconfig disables TLS verification (insecure-skip-tls-verify); the API server's identity is not checked");
        }
        return api;
    }

    /** Defaults, then the config file, then each flag the command line actually gave. */
    private ProxyConfig configuration() throws IOException {
        ProxyConfig base = ProxyConfig.defaults();
        if (cmd.config != null) {
            ConfigFile.Result r = ConfigFile.read(cmd.config, base);
            r.notes().forEach(n -> LOG.info("config {}", n));
            base = r.config();
        }
        ProxyConfig.Builder b = base.toBuilder();
        ParseResult pr = spec.commandLine().getParseResult();
        NodeOptions n = cmd.nodeOptions;
        if (pr.hasMatchedOption("--hostname-override")) b.hostnameOverride = n.hostname;
        if (pr.hasMatchedOption("--cluster-cidr")) b.clusterCidrs = n.clusterCidrs;
        if (pr.hasMatchedOption("--nodeport-addresses")) b.nodePortAddresses = n.nodePortAddresses;
        if (pr.hasMatchedOption("--masquerade-all")) b.masqueradeAll = n.masqueradeAll;
        if (pr.hasMatchedOption("--masquerade-bit")) b.masqueradeBit = n.masqueradeBit;
        if (pr.hasMatchedOption("--manifests")) b.manifests = n.manifests;
        if (cmd.kubeconfig != null) b.kubeconfig = cmd.kubeconfig;
        if (cmd.healthzBindAddress != null) b.healthzBindAddress = ConfigFile.hostPort("--healthz-bind-address", cmd.healthzBindAddress, 10256);
        if (cmd.metricsBindAddress != null) b.metricsBindAddress = ConfigFile.hostPort("--metrics-bind-address", cmd.metricsBindAddress, 10249);
        if (cmd.minSyncPeriod != null) b.minSyncPeriod = GoDuration.parse("--min-sync-period", cmd.minSyncPeriod);
        if (cmd.syncPeriod != null) b.syncPeriod = GoDuration.parse("--sync-period", cmd.syncPeriod);
        b.nftMode = cmd.nftMode.flagValue();
        if (b.hostnameOverride == null) b.hostnameOverride = osHostname();
        ProxyConfig c = b.build().validate();
        try {
            NodeContext.minimal(c.hostnameOverride());
        } catch (InvalidInputException e) {
            throw new ConfigException("hostnameOverride", c.hostnameOverride(), "a DNS-1123 subdomain (the node's name)");
        }
        return c;
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
