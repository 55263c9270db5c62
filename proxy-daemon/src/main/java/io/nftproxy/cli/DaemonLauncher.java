package io.nftproxy.cli;

import io.nftproxy.build.BuildInfo;
import io.nftproxy.config.GoDuration;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.conntrack.CleanupReport;
import io.nftproxy.daemon.NodeNetwork;
import io.nftproxy.daemon.ProxyDaemon;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.source.KubernetesSource;
import io.nftproxy.source.LoadProblem;
import io.nftproxy.source.LoadResult;
import io.nftproxy.source.ManifestDirectorySource;
import io.nftproxy.source.ManifestLoader;
import io.nftproxy.source.api.ApiServer;
import io.nftproxy.sync.SyncEngine;
import io.nftproxy.sync.SyncResult;
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
 * {@code nftproxy run}'s two ways, one wiring: with the configuration of {@link RunConfiguration}, opens nftables
 * and builds the {@link ProxyDaemon}; then either runs it on the chosen source until SIGTERM, or ({@code --once})
 * runs its sync once on the manifests and exits.
 */
final class DaemonLauncher {
    private static final Logger LOG = LoggerFactory.getLogger(DaemonLauncher.class);

    private final RunCommand cmd;

    DaemonLauncher(RunCommand cmd) {
        this.cmd = cmd;
    }

    /** A start that cannot go on: the one line that says why, and the exit code. */
    private static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        final int exit;

        Refused(int exit, String line) {
            super(line, null, false, false);
            this.exit = exit;
        }
    }

    /** Runs the daemon until SIGTERM, or with {@code once} its sync once; the exit code. */
    int run(ProxyConfig config, boolean once, PrintWriter out, PrintWriter err) {
        try {
            return once ? applyOnce(config, out, err) : daemon(config);
        } catch (Refused r) {
            err.println(r.getMessage());
            return r.exit;
        }
    }

    /** The daemon's sync, once, from {@code --manifests}: one line per table, then the conntrack cleanup's. */
    private int applyOnce(ProxyConfig config, PrintWriter out, PrintWriter err) throws Refused {
        if (config.manifests() == null) {
            throw new Refused(ExitCodes.USAGE, "nftproxy: --once applies the tables from a directory: give --manifests DIR");
        }
        LoadResult load;
        try {
            load = new ManifestLoader().load(config.manifests());
        } catch (IOException e) {
            throw new Refused(ExitCodes.INPUT_UNREADABLE, NodeOptions.unreadable(config.manifests(), e));
        }
        for (LoadProblem p : load.problems()) err.println("warning: " + p.describe("skipped"));
        Wired wired = wire(config, OwnProcesses.thisProcess(), new SdNotify(java.util.Map.of()));
        try (ProxyDaemon daemon = wired.daemon()) {
            probe(wired);
            SyncEngine.Report once = daemon.runOnce(load.snapshot());
            int exit = ExitCodes.OK;
            for (SyncResult r : once.result().families().values()) {
                if (r.success()) {
                    out.println("applied table " + r.family().nftFamily() + " kube-proxy: " + r.level().label()
                            + " sync, " + r.commands() + " commands" + (r.replaced() ? " (foreign content replaced)" : "")
                            + ", " + r.duration().toMillis() + " ms");
                } else if (r.errorKind() == NftException.Kind.PERMISSION) {
                    err.println("nftproxy: table " + r.family().nftFamily() + " kube-proxy not applied: permission denied "
                            + "(needs CAP_NET_ADMIN): " + r.error());
                    exit = ExitCodes.PERMISSION_DENIED;
                } else {
                    err.println("nftproxy: table " + r.family().nftFamily() + " kube-proxy not applied: " + r.error());
                    if (exit == ExitCodes.OK) exit = ExitCodes.SYNC_FAILED;
                }
            }
            CleanupReport c = once.conntrack();
            if (c != null && (c.stale() > 0 || c.errors() > 0)) {
                out.println("conntrack: deleted " + c.deleted() + " of " + c.stale() + " stale UDP entries"
                        + (c.errors() > 0 ? ", " + c.errors() + " errors" : ""));
            }
            return exit;
        }
    }

    private int daemon(ProxyConfig config) throws Refused {
        ApiServer api = null;
        if (config.manifests() == null) {
            // Only what an operator must edit stops the start: an unreadable or malformed kubeconfig (or the TLS files
            // it names). An API server that cannot be used yet is retried by the watches, forever (issue 23).
            try {
                api = apiServer(config, cmd.kubeProxyFlags.master == null ? null : cmd.kubeProxyFlags.masterUrl());
            } catch (RuntimeException e) {
                throw new Refused(ExitCodes.USAGE, "nftproxy: cannot start: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            }
        }
        ApiServer checked = api;
        Wired wired = wire(config, OwnProcesses.thisProcess(), SdNotify.fromEnvironment());
        ProxyDaemon daemon = wired.daemon();
        // Only now that our table serves every Service may the other mode's rules go (docs/migrating-from-kube-proxy.md).
        daemon.afterFirstSync(cmd::removeOtherModesLeftovers);
        // The lock and the health server come before the first nft call, so a hanging nft is logged and shown.
        try {
            daemon.startServers();
            probe(wired);
        } catch (Exception e) {
            daemon.close();
            throw e instanceof Refused r ? r : new Refused(ExitCodes.INPUT_UNREADABLE, cannotStart(e));
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
                    config.manifests() != null ? "manifests:" + config.manifests() : "kubernetes", wired.nft(),
                    config.tableLayout().cliName(), address(config.healthzBindAddress()),
                    address(config.metricsBindAddress()), config.clusterCidrs().isEmpty() ? "none" : join(config.clusterCidrs()),
                    detector(config), config.nodePortAddresses(), GoDuration.format(config.minSyncPeriod()),
                    GoDuration.format(config.syncPeriod()));
            stopped.await();
            return ExitCodes.OK;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ExitCodes.OK;
        } catch (Exception e) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException ignored) {
                // already shutting down
            }
            daemon.close();
            throw new Refused(ExitCodes.INPUT_UNREADABLE, cannotStart(e));
        }
    }

    /** Our own start errors (a bind, the namespace lock) say what and where in their message; the class name would only hide it. */
    private static String cannotStart(Exception e) {
        return "nftproxy: cannot start: " + (e instanceof IOException && e.getMessage() != null ? e.getMessage() : e);
    }

    /** The daemon and a description of its nft client, for the start line. */
    private record Wired(ProxyDaemon daemon, String nft) {}

    /** The daemon on the nft client {@code --nft-mode} selects, in this namespace or {@code --netns}'s. */
    private Wired wire(ProxyConfig config, OwnProcesses own, SdNotify notify) throws Refused {
        NftClients.Selection sel;
        try {
            sel = cmd.clients.open(config.nftMode(), cmd.netns, own::registerChild);
        } catch (IOException | RuntimeException e) {
            throw new Refused(e instanceof NftException n && n.isPermission() ? ExitCodes.PERMISSION_DENIED : ExitCodes.NFT_UNAVAILABLE,
                    RunCommand.cannotOpen(e, cmd.netns));
        }
        LOG.info("{}", sel.reason());
        NftClient client = sel.client();
        NodeNetwork network = NodeNetwork.namespace(cmd.netns);
        ProxyDaemon daemon = new ProxyDaemon(new ProxyDaemon.Options(config, network, config.manifests() != null),
                client, own, notify, Clock.systemUTC());
        return new Wired(daemon, client.describe());
    }

    /** The first nft call: whether nft works here, and whether we may use it. */
    private static void probe(Wired wired) throws Refused {
        try {
            wired.daemon().probeNft();
        } catch (NftException e) {
            throw new Refused(RunCommand.firstCallExit(e), RunCommand.firstCallFailed(e, wired.nft()));
        } catch (Exception e) {
            throw new Refused(ExitCodes.NFT_UNAVAILABLE, "nftproxy: nft unavailable (" + wired.nft() + "): " + e);
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
    static ApiServer apiServer(ProxyConfig config) { return apiServer(config, null); }

    /**
     * As {@link #apiServer(ProxyConfig)}, at {@code master} (kube-proxy's --master) when not null: over the
     * kubeconfig's server, or, without a kubeconfig, that URL alone with no credentials, as kube-proxy does.
     */
    static ApiServer apiServer(ProxyConfig config, java.net.URI master) {
        ApiServer api;
        if (master == null) {
            api = config.kubeconfig() != null ? ApiServer.fromKubeconfig(config.kubeconfig()) : ApiServer.autoConfigured();
        } else {
            api = config.kubeconfig() != null ? ApiServer.fromKubeconfig(config.kubeconfig()).at(master)
                    : ApiServer.of(new io.fabric8.kubernetes.client.ConfigBuilder(io.fabric8.kubernetes.client.Config.empty())
                            .withMasterUrl(master.toString()).build());
        }
        LOG.info("API server url={} from=\"{}\"", api.url(), api.origin());
        if (api.insecure()) {
            LOG.warn("the kubeconfig disables TLS verification (insecure-skip-tls-verify); the API server's identity is not checked");
        }
        return api;
    }

    /** {@code ip:port}, or "off" for port 0 (the server is not started). */
    private static String address(java.net.InetSocketAddress a) {
        return a.getPort() == 0 ? "off" : io.nftproxy.net.IpAddress.hostPort(a);
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
