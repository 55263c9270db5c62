package io.nftproxy.daemon;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.conntrack.CleanupReport;
import io.nftproxy.health.HealthCheckNodePorts;
import io.nftproxy.health.ProxyHealth;
import io.nftproxy.http.HttpServer;
import io.nftproxy.logging.LogSettings;
import io.nftproxy.metrics.ProxyMetrics;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.monitor.CommitLedger;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.monitor.TableChange;
import io.nftproxy.netlink.monitor.TableChangeListener;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.RulesetGeneration;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.node.NodeResolver;
import io.nftproxy.proxy.Diagnostic;
import io.nftproxy.proxy.NodeContext;
import io.nftproxy.source.ClusterStore;
import io.nftproxy.source.KubernetesSource;
import io.nftproxy.source.ServiceChanges;
import io.nftproxy.sync.GenerationTracker;
import io.nftproxy.sync.KernelTable;
import io.nftproxy.sync.ProxySync;
import io.nftproxy.sync.SyncResult;
import io.nftproxy.sync.SyncRunner;
import io.nftproxy.systemd.SdNotify;
import io.nftproxy.systemd.Watchdog;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The running proxy: sources record into the {@link ClusterStore}, one {@link SyncRunner} thread owns all kernel
 * work (render, diff, one transaction per family), the nftables monitor turns anyone else's change to our tables
 * into an immediate full resync, and after each successful sync the health state, health-check NodePorts and stale
 * UDP conntrack entries follow. Stopping it never removes a rule: the dataplane keeps working across restarts.
 */
public final class ProxyDaemon implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProxyDaemon.class);
    private static final Logger SYNCS = LoggerFactory.getLogger(LogSettings.SYNCS);

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
    private final WatchedNftClient client;
    private volatile ScheduledFuture<?> nftWatch;
    private boolean serversStarted;
    private final OwnProcesses own;
    private final Clock clock;
    private final ClusterStore store = new ClusterStore();
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final ProxyMetrics metrics;
    private final ProxyHealth health;
    private final HealthCheckNodePorts healthCheckNodePorts;
    private final ProxySync proxySync;
    private final LazyGeneration generation;
    /** The monitor's record of every commit: lets the periodic verification skip the read-back after others' commits. */
    private final CommitLedger ledger = new CommitLedger();
    private final TamperBackoff tamper = new TamperBackoff();
    private final SdNotify notify;
    /** The status line and log while the first sync runs, which at cold start can take seconds. */
    private final FirstSyncProgress firstSyncProgress;
    private final CountDownLatch firstSync = new CountDownLatch(1);
    private volatile Runnable afterFirstSync = () -> { };
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private volatile long lastRunNanos = System.nanoTime();
    private final SyncFollowUps followUps;
    private final DaemonRoutes routes;
    private SyncRunner runner;
    private List<String> lastWaitingFor = List.of();
    private List<Diagnostic> lastNodeDiagnostics = List.of();

    private final SyncRunner.Scheduler scheduler;

    public ProxyDaemon(Options options, NftClient client, OwnProcesses own, SdNotify notify, Clock clock) {
        this(options, client, own, notify, clock, SyncRunner.threadScheduler("sync"));
    }

    /** With the sync loop on {@code scheduler}: a manual one lets a test decide when syncs run. */
    public ProxyDaemon(Options options, NftClient client, OwnProcesses own, SdNotify notify, Clock clock,
                       SyncRunner.Scheduler scheduler) {
        this.options = options;
        this.scheduler = scheduler;
        this.client = new WatchedNftClient(client, System::nanoTime);
        this.own = own;
        this.notify = notify;
        this.firstSyncProgress = new FirstSyncProgress(notify::status, System::nanoTime);
        this.clock = clock;
        this.metrics = new ProxyMetrics(registry, true);
        metrics.changeTracking(() -> store.changeCounts().serviceEvents(), () -> store.changeCounts().servicesPending(),
                () -> store.changeCounts().endpointSliceEvents(), () -> store.changeCounts().endpointSliceChangesPending());
        metrics.undecodableObjects(store::undecodableCounts);
        ProxyConfig c = options.config();
        this.health = new ProxyHealth(clock, c.syncPeriod().multipliedBy(2), Set.of(IpFamily.values()));
        health.unhealthyWhile(tamper::unhealthyCause);
        health.unhealthyWhile(now -> this.client.waiting());
        this.healthCheckNodePorts = new HealthCheckNodePorts(() -> health.status().healthy());
        this.followUps = new SyncFollowUps(options.network(), healthCheckNodePorts, metrics);
        this.routes = new DaemonRoutes(health, metrics, c);
        this.generation = new LazyGeneration(options.network());
        this.proxySync = new ProxySync(new GenerationTracker(this.client, generation::current, ledger),
                c.renderer(), c.fullSyncPeriod(), ownPorts(c));
        proxySync.progress(firstSyncProgress);
        closeables.add(options.network()); // closed last: everything after it may still call into the network
        closeables.add(generation);
    }

    /** The TCP ports our own servers listen on: a Service given one as its node port would take it from them. */
    private static Map<Integer, String> ownPorts(ProxyConfig c) {
        Map<Integer, String> out = new HashMap<>();
        if (c.metricsBindAddress().getPort() != 0) out.put(c.metricsBindAddress().getPort(), "metrics server");
        if (c.healthzBindAddress().getPort() != 0) out.put(c.healthzBindAddress().getPort(), "healthz server");
        return out;
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
        // Not the sync loop's scheduler: the sync thread is the one a hanging nft holds.
        nftWatch = HttpServer.eventLoop().scheduleWithFixedDelay(() -> {
            String overdue = client.overdue();
            if (overdue != null) LOG.warn("{}; /healthz says 503 with this cause until it answers", overdue);
        }, 1, 1, TimeUnit.SECONDS);
    }

    /** What this host's nft accepts: the first nft call, made after {@link #startServers()} (the daemon) or alone (once). */
    public Capabilities probeNft() throws Exception {
        return client.capabilities();
    }

    /** Starts servers (unless {@link #startServers()} did), the monitor, the sync loop and then the source; returns at once. */
    public void start(SourceStarter source) throws Exception {
        startServers();
        ProxyConfig c = options.config();
        runner = new SyncRunner(new SyncRunner.Intervals(c.minSyncPeriod(), c.syncPeriod(),
                Duration.ofSeconds(1), c.syncPeriod()), this::syncOnce, scheduler);
        NodeNetwork network = options.network();
        closeables.add(network.monitorTables(own, ledger, new TableChangeListener() {
            @Override public void onTableChange(TableChange change) {
                if (!change.requiresResync()) return;
                if (change.origin() == TableChange.Origin.FOREIGN) {
                    repairForeignChange(change);
                    return;
                }
                // Lost notifications say nothing about who changed what: say that, rather than blame someone else,
                // and leave the foreign-writer back-off alone.
                LOG.warn("{}", lostTrack(change));
                for (IpFamily f : change.families()) metrics.tamperResync(f);
                resyncByReadBack();
            }

            @Override public void onMonitorFailed(Exception cause) {
                LOG.error("nftables monitor stopped error={}; tampering is now repaired only by the periodic full sync",
                        cause.toString());
            }
        }));
        store.onChange(() -> {
            for (IpFamily f : IpFamily.values()) {
                health.queued(f);
                metrics.queued(f);
            }
            runner.requestSync();
        });
        proxySync.readBackEarly();
        AutoCloseable started = source.start(store);
        closeables.add(started);
        // Until the first sync, an API server that cannot be used is why /healthz says 503: the body names it. After
        // it, the table programmed last stays valid through an outage and /healthz goes by the sync times alone.
        if (started instanceof KubernetesSource k) health.unhealthyWhile(now -> firstSync.getCount() > 0 ? k.unusable() : null);
        // nodeport-ips follows the node's addresses: a change re-reads them at the next sync (a full one, as the
        // node context changed), rather than waiting for the periodic run.
        closeables.add(network.monitorAddresses(runner::requestSync,
                e -> LOG.warn("address monitor stopped error={}; address changes are seen at the next periodic sync", e.toString())));
        closeables.add(Watchdog.start(notify, this::alive));
        runner.requestSync();
    }

    /**
     * The namespace's nf_tables generation, for {@link GenerationTracker}: the socket is opened in
     * the node's network on first use (not in the constructor: no netlink before the lock is held), and opened again
     * after a failure. Used by the sync thread and the early read-back, one at a time.
     */
    private static final class LazyGeneration implements AutoCloseable {
        private final NodeNetwork network;
        private RulesetGeneration socket;

        LazyGeneration(NodeNetwork network) { this.network = network; }

        synchronized long current() throws Exception {
            if (socket == null) socket = network.call(RulesetGeneration::open);
            try {
                return socket.current();
            } catch (IOException | RuntimeException e) {
                close();
                throw e;
            }
        }

        @Override public synchronized void close() {
            if (socket != null) socket.close();
            socket = null;
        }
    }

    /** The log line for a change the monitor could not attribute: an overflow, typically during our own big sync. */
    static String lostTrack(TableChange change) {
        if (change.origin() == TableChange.Origin.OVERFLOW) {
            return "nftables monitor overflowed, resyncing by read-back (its socket dropped notifications, as a big sync "
                    + "of our own can make it; nobody else is blamed): " + change.detail();
        }
        return "nftables monitor lost track of changes to our tables (" + change.detail()
                + "); cannot tell whose they were: resyncing by read-back";
    }

    /** Repairs another process's change now, or later when it keeps changing the table (see TamperBackoff). */
    private void repairForeignChange(TableChange change) {
        TamperBackoff.Decision d = tamper.onForeignChange(clock.instant(),
                "pid=" + change.pid() + " process=" + change.process());
        if (d.warning() != null) LOG.warn("{} families={} messages={}", d.warning(), change.families(), change.messages());
        if (d.delay() == null) return;
        for (IpFamily f : change.families()) metrics.tamperResync(f);
        if (d.delay().isZero()) resyncByReadBack();
        else scheduler.schedule(this::resyncByReadBack, d.delay().toNanos());
    }

    private void resyncByReadBack() {
        proxySync.requestReadBack();
        runner.requestSync();
    }

    /**
     * {@code task} runs once, on the sync thread, after the first sync that programmed every table and before that
     * sync counts as done (READY=1, {@link #awaitFirstSync}): for removing another proxy mode's rules, which until
     * then serve the node's Services. Set before {@link #start}.
     */
    public void afterFirstSync(Runnable task) { this.afterFirstSync = task; }

    /** Waits for the first successful sync; true when it happened within the timeout. */
    public boolean awaitFirstSync(Duration timeout) throws InterruptedException {
        return firstSync.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The bound address of a started server, in start order (healthz first), for tests with port 0. */
    public List<InetSocketAddress> serverAddresses() {
        List<InetSocketAddress> out = new ArrayList<>();
        for (AutoCloseable c : closeables) if (c instanceof HttpServer s) out.add(s.address());
        return out;
    }

    /** The sync loop is alive while it finished a run within two sync periods (it runs at least once per period). */
    private boolean alive() {
        return System.nanoTime() - lastRunNanos < options.config().syncPeriod().multipliedBy(2).plusSeconds(30).toNanos();
    }

    private SyncRunner.Outcome syncOnce(SyncRunner.Request request) {
        try {
            if (!store.ready()) {
                List<String> waiting = store.waitingFor();
                if (!waiting.equals(lastWaitingFor)) {
                    LOG.info("first sync waits for the whole cluster: {} not listed yet; /healthz says 503 until then", waiting);
                    lastWaitingFor = waiting;
                }
                return SyncRunner.Outcome.DONE;
            }
            return runSync();
        } finally {
            lastRunNanos = System.nanoTime();
        }
    }

    /** One sync of what the store holds, recorded in health and metrics; the follow-ups are the caller's. */
    private Synced sync() {
        String hostname = options.config().hostnameOverride();
        NodeObject nodeObject = store.node(hostname);
        // A node running from manifests alone may have no Node object; that must not make /healthz fail.
        health.node(nodeObject != null || !options.nodeObjectOptional() ? nodeObject
                : new NodeObject(new ObjectMeta(null, hostname, Map.of(), Map.of(), false), List.of(), List.of(), List.of()));
        NodeResolver.Resolved node = NodeResolver.resolve(options.config(), nodeObject, interfaceAddresses());
        // Logged when they change, not every sync: a bad Node address stays bad until the Node is fixed.
        for (var d : node.diagnostics()) {
            if (!lastNodeDiagnostics.contains(d)) {
                LOG.warn("{}", d);
                metrics.invalidObject(d.kind(), d.field());
            }
        }
        lastNodeDiagnostics = node.diagnostics();
        List<Instant> triggers = store.drainTriggerTimes();
        // Drained before the objects are read: a change recorded meanwhile is seen now and again next time.
        ServiceChanges changes = store.drainChanges();
        Map<IpFamily, Long> cleanupFailuresBefore = new EnumMap<>(IpFamily.class);
        for (IpFamily f : IpFamily.values()) cleanupFailuresBefore.put(f, proxySync.kernel(f).failedStaleDeletes());
        ProxySync.Result result = proxySync.sync(store, changes, node.node(), clock.instant());
        for (IpFamily f : IpFamily.values()) {
            long n = proxySync.kernel(f).failedStaleDeletes() - cleanupFailuresBefore.get(f);
            for (long i = 0; i < n; i++) metrics.cleanupFailed(f);
        }
        LOG.debug("sync core time={}us services={} everything={}", result.coreTime().toNanos() / 1000,
                result.everything() ? -1 : result.deltas().size(), result.everything());
        // kube-proxy's "SyncProxyRules complete" line, shown from -v 2.
        SYNCS.info("sync done plan={} services={} results={}", result.everything() ? result.plan().reasons() : "partial",
                result.everything() ? "all" : Integer.toString(result.deltas().size()), result.families().values());
        for (var d : result.logged()) metrics.invalidObject(d.kind(), d.field());
        result.plan().verifications().values().forEach(v -> metrics.tableVerification(v.family(), v.path()));
        Instant done = clock.instant();
        for (SyncResult r : result.families().values()) {
            if (r.success()) {
                metrics.sync(r.family(), r.full(), r.duration(), r.commands());
                health.updated(r.family());
                for (Instant t : triggers) metrics.programmingLatency(r.family(), Duration.between(t, done));
                metrics.noLocalEndpoints(r.family(), result.noLocalInternal(r.family()), result.noLocalExternal(r.family()));
            } else {
                metrics.syncFailed(r.family());
            }
        }
        return new Synced(result, node.node());
    }

    private record Synced(ProxySync.Result result, NodeContext node) {}

    /**
     * The daemon's sync, once, on the calling thread ({@code run --once}): {@code cluster} is the whole cluster, and
     * after a successful sync the stale UDP conntrack entries go, as after every sync. No lock, servers, monitors or
     * loop: nothing of it runs on after this returns.
     */
    public Once runOnce(ClusterSnapshot cluster) {
        store.replaceAll(cluster);
        store.servicesListed();
        store.endpointSlicesListed();
        Synced s = sync();
        return new Once(s.result(), s.result().success() ? followUps.cleanConntrack(s.result(), true) : null);
    }

    /** @param conntrack what the conntrack cleanup did; null when none was due, it failed (logged) or the sync failed */
    public record Once(ProxySync.Result result, CleanupReport conntrack) {}

    private SyncRunner.Outcome runSync() {
        if (firstSync.getCount() > 0) firstSyncProgress.starting(store.serviceCount(), store.endpointSliceCount());
        Synced s = sync();
        ProxySync.Result result = s.result();
        if (!result.success()) return SyncRunner.Outcome.FAILED;
        // Ready as soon as /healthz says so: the tables are programmed; the follow-ups below are not part of that.
        if (firstSync.getCount() > 0) {
            firstSyncProgress.finished();
            try {
                afterFirstSync.run();
            } catch (RuntimeException e) {
                LOG.warn("after the first sync error={}", e.toString());
            }
            firstSync.countDown();
            notify.ready("tables programmed");
            LOG.info("first sync done services={} endpointSlices={}", store.serviceCount(), store.endpointSliceCount());
        }
        followUps.after(result, s.node());
        // Flushed chains are deleted by the first sync after their grace; without a follow-up, an idle proxy would
        // keep a deleted service's empty chain until the periodic run (upstream keeps it until any later sync).
        // The deadline is on the wall clock: one stepped back since would put it as far away as the step, so the
        // wait is never longer than the grace (KernelTable then takes the grace as run out).
        return proxySync.nextDeadline()
                .map(at -> {
                    Duration wait = Duration.between(clock.instant(), at);
                    return SyncRunner.Outcome.again((wait.compareTo(KernelTable.STALE_CHAIN_GRACE) > 0 ? KernelTable.STALE_CHAIN_GRACE : wait)
                            .plusMillis(50));
                })
                .orElse(SyncRunner.Outcome.DONE);
    }

    private List<IpAddress> interfaceAddresses() {
        try {
            return options.network().interfaceAddresses();
        } catch (Exception e) {
            LOG.warn("cannot list interface addresses error={}; using the node IPs for nodeport-ips", e.toString());
            return null;
        }
    }

    /** Stops watching and syncing (finishing or abandoning the current sync), closes servers; rules stay. */
    @Override public void close() {
        notify.stopping();
        if (runner != null && !runner.stop(Duration.ofSeconds(5))) LOG.warn("sync abandoned at shutdown; the kernel keeps its last committed table");
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                LOG.debug("close failed error={}", e.toString());
            }
        }
        healthCheckNodePorts.close();
        ScheduledFuture<?> watch = nftWatch;
        if (watch != null) watch.cancel(false);
        try {
            client.close();
        } catch (Exception e) {
            LOG.debug("nft client close failed error={}", e.toString());
        }
        LOG.info("stopped; nftables rules left in place");
    }
}
