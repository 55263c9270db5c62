package io.nftproxy.cli;

import io.nftproxy.build.BuildInfo;
import io.nftproxy.config.GoDuration;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.daemon.ProxyDaemon;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.node.NodeSettings;
import io.nftproxy.source.KubernetesSource;
import io.nftproxy.source.api.ApiServer;
import io.nftproxy.source.ManifestDirectorySource;
import io.nftproxy.systemd.SdNotify;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;

/**
 * {@code nftproxy run} without {@code --once}: with the {@link RunConfiguration}, opens nftables, starts the daemon on
 * the chosen source and runs until SIGTERM.
 */
final class DaemonLauncher {
    private static final Logger LOG = LoggerFactory.getLogger(DaemonLauncher.class);

    private final RunCommand cmd;

    DaemonLauncher(RunCommand cmd) {
        this.cmd = cmd;
    }

    /** How long the start waits for the API server's first answer: a healthy one answers in milliseconds. */
    static final Duration FIRST_CONTACT = Duration.ofSeconds(5);

    int run(RunConfiguration rc, PrintWriter err) {
        ProxyConfig config = rc.config();
        NodeSettings node = rc.node();
        ApiServer api = null;
        if (config.manifests() == null) {
            // Before anything else: a wrong URL, CA or token is one line naming the server and the cause, in seconds.
            try {
                api = apiServer(config);
                ApiServer.Failure failure = api.firstContact(FIRST_CONTACT);
                if (failure != null) {
                    err.println("nftproxy: cannot start: API server " + api.url() + " unusable: " + failure.detail()
                            + (config.kubeconfig() == null ? "" : " (kubeconfig " + config.kubeconfig() + ")"));
                    return ExitCodes.API_UNUSABLE;
                }
            } catch (IllegalArgumentException e) {
                err.println("nftproxy: cannot start: " + e.getMessage());
                return ExitCodes.INPUT_UNREADABLE;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return ExitCodes.OK;
            }
        }
        ApiServer checked = api;
        OwnProcesses own = OwnProcesses.thisProcess();
        NftClient client;
        try {
            NftClients.Selection sel = cmd.clients().open(cmd.nftMode, cmd.netns, own::registerChild);
            client = sel.client();
            LOG.info("{}", sel.reason());
        } catch (NftException e) {
            err.println("nftproxy: nft unavailable: " + e.getMessage());
            return e.isPermission() ? ExitCodes.PERMISSION_DENIED : ExitCodes.NFT_UNAVAILABLE;
        } catch (IOException | RuntimeException e) {
            err.println("nftproxy: cannot open nft: " + e.getMessage());
            return ExitCodes.NFT_UNAVAILABLE;
        }
        ProxyDaemon daemon = new ProxyDaemon(new ProxyDaemon.Options(config, node, cmd.netns == null ? io.nftproxy.daemon.NodeNetwork.host() : io.nftproxy.daemon.NodeNetwork.namespace(cmd.netns), config.manifests() != null,
                cmd.nodeOptions.tableLayout(), cmd.nodeOptions.refuseExternalIPOverlaps),
                client, own, SdNotify.fromEnvironment(), Clock.systemUTC());
        // The lock and the health server come before the first nft call, so a hanging nft is logged and shown.
        try {
            daemon.startServers();
            daemon.probeNft();
        } catch (NftException e) {
            daemon.close();
            err.println("nftproxy: nft unavailable: " + e.getMessage());
            return e.isPermission() ? ExitCodes.PERMISSION_DENIED : ExitCodes.NFT_UNAVAILABLE;
        } catch (Exception e) {
            daemon.close();
            err.println("nftproxy: cannot start: " + (e instanceof IOException && e.getMessage() != null ? e.getMessage() : e));
            return ExitCodes.INPUT_UNREADABLE;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        // SIGTERM is the normal way to stop (systemctl stop): after a clean stop the process exits 0, as --help says,
        // not the JVM's 143, so the unit ends inactive rather than failed. A stop that throws never reaches halt and
        // the JVM exits 143 as usual. halt, not exit: the stop is done, and exit would wait for this very hook.
        // Logging is stopped here, not by Log4j's own hook (disabled in log4j2.xml), so the stop line is written.
        Thread hook = new Thread(() -> {
            daemon.close();
            stopped.countDown();
            org.apache.logging.log4j.LogManager.shutdown();
            Runtime.getRuntime().halt(ExitCodes.OK);
        }, "shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            daemon.start(source(config, checked));
            LOG.info("started version={} commit={} node={} source={} proxyMode=nftables nft={} layout={} healthz={} metrics={} "
                            + "clusterCIDR={} detectLocalMode={} nodePortAddresses={} minSyncPeriod={} syncPeriod={}",
                    BuildInfo.current().version(), BuildInfo.current().commit(), config.hostnameOverride(),
                    config.manifests() != null ? "manifests:" + config.manifests() : "kubernetes", client.describe(),
                    cmd.nodeOptions.tableLayout().name().toLowerCase(Locale.ROOT), address(config.healthzBindAddress()),
                    address(config.metricsBindAddress()), config.clusterCidrs().isEmpty() ? "none" : join(config.clusterCidrs()),
                    detector(config),
                    join(config.nodePortAddresses()), GoDuration.format(config.minSyncPeriod()), GoDuration.format(config.syncPeriod()));
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

    private ProxyDaemon.SourceStarter source(ProxyConfig config, ApiServer api) {
        if (config.manifests() != null) {
            return store -> new ManifestDirectorySource(config.manifests(), store, Duration.ofMillis(200));
        }
        return store -> {
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

    /** {@code ip:port}, or "off" for port 0 (the server is not started). */
    private static String address(java.net.InetSocketAddress a) {
        if (a.getPort() == 0) return "off";
        String host = a.getAddress().getHostAddress();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    /** The detector and its interface, as given: {@code BridgeInterface:cbr0}, {@code InterfaceNamePrefix:veth}. */
    private static String detector(ProxyConfig c) {
        return switch (c.detectLocal().mode()) {
            case io.nftproxy.config.LocalDetection.BRIDGE_INTERFACE -> c.detectLocal().mode() + ":" + c.detectLocal().bridgeInterface();
            case io.nftproxy.config.LocalDetection.INTERFACE_NAME_PREFIX -> c.detectLocal().mode() + ":" + c.detectLocal().interfaceNamePrefix();
            default -> c.detectLocal().mode();
        };
    }

    private static String join(List<?> items) { return String.join(",", items.stream().map(String::valueOf).toList()); }
}
