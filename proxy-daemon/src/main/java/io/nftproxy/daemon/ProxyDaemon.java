package io.nftproxy.daemon;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.health.HealthCheckNodePorts;
import io.nftproxy.health.ProxyHealth;
import io.nftproxy.http.HttpServer;
import io.nftproxy.metrics.ProxyMetrics;
import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.monitor.CommitLedger;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.source.ClusterStore;
import io.nftproxy.source.KubernetesSource;
import io.nftproxy.sync.GenerationTracker;
import io.nftproxy.sync.SyncEngine;
import io.nftproxy.sync.SyncRunner;
import io.nftproxy.systemd.SdNotify;
import io.nftproxy.systemd.Watchdog;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The running proxy, wired: sources record into the {@link ClusterStore}, the {@link SyncEngine} syncs on one thread
 * (and repairs another writer's change), the {@link StartGate} holds the first sync until the whole cluster is there.
 * This class only builds the parts and runs their lifecycle. Stopping it never removes a rule: the dataplane keeps
 * working across restarts.
 */
public final class ProxyDaemon implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProxyDaemon.class);

    /** Starts a source that feeds the store (manifest directory, Kubernetes informers). */
    @FunctionalInterface
    public interface SourceStarter {
        AutoCloseable start(ClusterStore store) throws Exception;
    }

    /**
     * @param network            the node's network: {@link NodeNetwork#host()}, or a namespace in kernel tests
     * @param nodeObjectOptional true for a manifest source: a node that runs without a cluster has no Node object,
     *                           and that must not make /healthz fail
     */
    public record Options(ProxyConfig config, NodeNetwork network, boolean nodeObjectOptional) {}

    private final Options options;
    private final OwnProcesses own;
    private final SdNotify notify;
    private final ClusterStore store = new ClusterStore();
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final ProxyMetrics metrics;
    private final ProxyHealth health;
    private final HealthCheckNodePorts healthCheckNodePorts;
    /** The monitor's record of every commit: lets the periodic verification skip the read-back after others' commits. */
    private final CommitLedger ledger = new CommitLedger();
    private final SyncEngine engine;
    private final StartGate gate;
    private final DaemonRoutes routes;
    private final SyncRunner.Scheduler scheduler;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private boolean serversStarted;

    public ProxyDaemon(Options options, NftClient client, OwnProcesses own, SdNotify notify, Clock clock) {
        this(options, client, own, notify, clock, SyncRunner.threadScheduler("sync"));
    }

    /** With the sync loop on {@code scheduler}: a manual one lets a test decide when syncs run. */
    public ProxyDaemon(Options options, NftClient client, OwnProcesses own, SdNotify notify, Clock clock,
                       SyncRunner.Scheduler scheduler) {
        this.options = options;
        this.scheduler = scheduler;
        this.own = own;
        this.notify = notify;
        ProxyConfig c = options.config();
        this.metrics = new ProxyMetrics(registry, true, clock);
        metrics.changeTracking(() -> store.changeCounts().serviceEvents(), () -> store.changeCounts().servicesPending(),
                () -> store.changeCounts().endpointSliceEvents(), () -> store.changeCounts().endpointSliceChangesPending());
        metrics.undecodableObjects(store::undecodableCounts);
        this.health = new ProxyHealth(clock, c.syncPeriod().multipliedBy(2), Set.of(IpFamily.values()));
        this.healthCheckNodePorts = new HealthCheckNodePorts(() -> health.status().healthy());
        this.routes = new DaemonRoutes(health, metrics, c);
        LazyGeneration generation = new LazyGeneration(options.network());
        this.engine = new SyncEngine(c, options.nodeObjectOptional(), client,
                watched -> new GenerationTracker(watched, generation::current, ledger), store, health, metrics,
                healthCheckNodePorts, options.network(), clock);
        FirstSyncProgress progress = new FirstSyncProgress(notify::status, System::nanoTime);
        engine.progress(progress);
        this.gate = new StartGate(store, notify, progress);
        closeables.add(options.network()); // closed last: everything after it may still call into the network
        closeables.add(generation);
    }

    public ClusterStore store() { return store; }

    public ProxyHealth health() { return health; }

    public ProxyMetrics metrics() { return metrics; }

    /**
     * Takes the namespace's lock and starts the healthz and metrics servers and the watch on nft calls, before any
     * call to nft: an nft that hangs is then logged within seconds and named by /healthz (issue 10).
     */
    public void startServers() throws Exception {
        if (serversStarted) return;
        serversStarted = true;
        ProxyConfig c = options.config();
        // First of all: a second daemon in this network namespace must stop here, before it writes anything.
        closeables.add(options.network().lock());
        if (c.healthzBindAddress().getPort() != 0) {
            closeables.add(HttpServer.start("healthz server (healthzBindAddress)", c.healthzBindAddress(), routes::health));
        }
        if (c.metricsBindAddress().getPort() != 0) {
            closeables.add(HttpServer.start("metrics server (metricsBindAddress)", c.metricsBindAddress(), routes::metrics));
        }
        closeables.add(engine.watchNft());
    }

    /** What this host's nft accepts: the first nft call, made after {@link #startServers()} (the daemon) or alone (once). */
    public Capabilities probeNft() throws Exception { return engine.probeNft(); }

    /** Starts servers (unless {@link #startServers()} did), the monitor, the sync loop and then the source; returns at once. */
    public void start(SourceStarter source) throws Exception {
        startServers();
        engine.start(scheduler, gate);
        NodeNetwork network = options.network();
        closeables.add(network.monitorTables(own, ledger, engine.tamperResponse()));
        engine.readBackEarly();
        AutoCloseable started = source.start(store);
        closeables.add(started);
        // Until the first sync, an API server that cannot be used is why /healthz says 503: the body names it. After
        // it, the table programmed last stays valid through an outage and /healthz goes by the sync times alone.
        if (started instanceof KubernetesSource k) health.unhealthyWhile(now -> gate.firstSyncDone() ? null : k.unusable());
        // nodeport-ips follows the node's addresses: a change re-reads them at the next sync (a rebuild, as the node
        // context changed), rather than waiting for the periodic run.
        closeables.add(network.monitorAddresses(engine::requestSync,
                e -> LOG.warn("address monitor stopped error={}; address changes are seen at the next periodic sync", e.toString())));
        closeables.add(Watchdog.start(notify, engine::alive));
        engine.requestSync();
    }

    /**
     * {@code task} runs once, on the sync thread, after the first sync that programmed every table and before that
     * sync counts as done (READY=1, {@link #awaitFirstSync}): for removing another proxy mode's rules, which until
     * then serve the node's Services. Set before {@link #start}.
     */
    public void afterFirstSync(Runnable task) { gate.afterFirstSync(task); }

    /** Waits for the first successful sync; true when it happened within the timeout. */
    public boolean awaitFirstSync(Duration timeout) throws InterruptedException { return gate.awaitFirstSync(timeout); }

    /** The bound address of a started server, in start order (healthz first), for tests with port 0. */
    public List<InetSocketAddress> serverAddresses() {
        List<InetSocketAddress> out = new ArrayList<>();
        for (AutoCloseable c : closeables) if (c instanceof HttpServer s) out.add(s.address());
        return out;
    }

    /**
     * The daemon's sync, once, on the calling thread ({@code run --once}): {@code cluster} is the whole cluster. No
     * lock, servers, monitors or loop: nothing of it runs on after this returns.
     */
    public SyncEngine.Report runOnce(ClusterSnapshot cluster) { return engine.once(cluster); }

    /** Stops watching and syncing (finishing or abandoning the current sync), closes servers; rules stay. */
    @Override public void close() {
        notify.stopping();
        if (!engine.stop(Duration.ofSeconds(5))) LOG.warn("sync abandoned at shutdown; the kernel keeps its last committed table");
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                LOG.debug("close failed error={}", e.toString());
            }
        }
        healthCheckNodePorts.close();
        try {
            engine.closeClient();
        } catch (Exception e) {
            LOG.debug("nft client close failed error={}", e.toString());
        }
        LOG.info("stopped; nftables rules left in place");
    }
}
