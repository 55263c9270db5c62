package io.nftproxy.sync;

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
import io.nftproxy.netlink.monitor.TableChangeListener;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.node.NodeResolver;
import io.nftproxy.service.Diagnostic;
import io.nftproxy.service.NodeContext;
import io.nftproxy.service.ProxyState;
import io.nftproxy.source.ClusterStore;
import io.nftproxy.source.ServiceChanges;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The sync: one call ({@link #sync}) plans, updates the table models, commits to the kernel, records health and
 * metrics, runs the follow-ups (health-check NodePort servers, stale UDP conntrack entries) and returns one
 * {@link Report}, as kube-proxy's {@code syncProxyRules} is one step. Around it, the engine owns what decides when a
 * sync runs: the {@link SyncRunner}, the response to another writer's change ({@link #tamperResponse}) and the watch
 * on nft calls that hang ({@link #watchNft}).
 *
 * <p>Its parts: {@link ProxySync} (planner, models and kernel tables), {@link SyncFollowUps}, {@link TamperResponse}.
 * The daemon only wires it and runs the lifecycle. Syncs run on one thread (the runner's, or the caller's in once
 * mode).
 */
public final class SyncEngine {
    private static final Logger LOG = LoggerFactory.getLogger(SyncEngine.class);
    private static final Logger SYNCS = LoggerFactory.getLogger(LogSettings.SYNCS);

    /** The node's network as a sync needs it. */
    public interface NodeAccess {
        /** The addresses configured on the node's interfaces. */
        List<IpAddress> interfaceAddresses() throws Exception;

        /** Runs {@code task} on a thread in the node's network: sockets it makes belong there. */
        <T> T call(Callable<T> task) throws Exception;

        /** Deletes the stale UDP conntrack entries of the node's network. */
        CleanupReport cleanConntrack(ProxyState v4, ProxyState v6) throws Exception;
    }

    /** The daemon's lifecycle as a sync sees it: the start gate and the first sync. */
    public interface Lifecycle {
        /** Whether a sync may run now: the first waits until the whole cluster was listed. */
        boolean mayRun();

        /** A sync programmed every table; called before its follow-ups. */
        void programmed();
    }

    /**
     * What one sync did.
     *
     * @param result    the sync itself, per family, with its plan and level
     * @param node      the node context it programmed
     * @param conntrack what the conntrack cleanup did; null when none was due, it failed (logged) or the sync failed
     */
    public record Report(ProxySync.Result result, NodeContext node, CleanupReport conntrack) {
        public boolean success() { return result.success(); }
    }

    private final ProxyConfig config;
    private final boolean nodeObjectOptional;
    private final ClusterStore store;
    private final ProxyHealth health;
    private final ProxyMetrics metrics;
    private final NodeAccess node;
    private final Clock clock;
    private final WatchedNftClient client;
    private final ProxySync proxySync;
    private final SyncFollowUps followUps;
    private final TamperBackoff tamper = new TamperBackoff();
    private List<Diagnostic> lastNodeDiagnostics = List.of();
    private volatile long lastRunNanos = System.nanoTime();
    private SyncRunner runner;
    private SyncRunner.Scheduler scheduler;

    /**
     * @param client             the node's nft client; every call is watched for hanging
     * @param tracking           wraps the watched client in the tracker that proves a table unchanged on the timer
     *                           without listing it ({@link GenerationTracker#verify}, the planner's verifier)
     * @param nodeObjectOptional true for a manifest source: a node that runs without a cluster has no Node object,
     *                           and that must not make /healthz fail
     */
    public SyncEngine(ProxyConfig config, boolean nodeObjectOptional, NftClient client,
                      Function<NftClient, GenerationTracker> tracking, ClusterStore store, ProxyHealth health,
                      ProxyMetrics metrics, HealthCheckNodePorts healthCheckNodePorts, NodeAccess node, Clock clock) {
        this.config = config;
        this.nodeObjectOptional = nodeObjectOptional;
        this.store = store;
        this.health = health;
        this.metrics = metrics;
        this.node = node;
        this.clock = clock;
        this.client = new WatchedNftClient(client, System::nanoTime);
        GenerationTracker tracker = tracking.apply(this.client);
        this.proxySync = new ProxySync(tracker, tracker::verify, config.renderer(), config.convergePeriod(), ownPorts(config));
        this.followUps = new SyncFollowUps(node, healthCheckNodePorts, metrics);
        health.unhealthyWhile(tamper::unhealthyCause);
        health.unhealthyWhile(now -> this.client.waiting());
    }

    /** The TCP ports our own servers listen on: a Service given one as its node port would take it from them. */
    private static Map<Integer, String> ownPorts(ProxyConfig c) {
        Map<Integer, String> out = new HashMap<>();
        if (c.metricsBindAddress().getPort() != 0) out.put(c.metricsBindAddress().getPort(), "metrics server");
        if (c.healthzBindAddress().getPort() != 0) out.put(c.healthzBindAddress().getPort(), "healthz server");
        return out;
    }

    /** Who is told of each committed part of a transaction cut into parts. */
    public void progress(ApplyProgress p) { proxySync.progress(p); }

    /** What this host's nft accepts: the first nft call. */
    public Capabilities probeNft() throws Exception { return client.capabilities(); }

    /**
     * Logs an nft call that takes over 5 s, once, while {@code /healthz} names it as its cause (issue 10). Not on the
     * sync loop's scheduler: the sync thread is the one a hanging nft holds.
     */
    public AutoCloseable watchNft() {
        ScheduledFuture<?> watch = HttpServer.eventLoop().scheduleWithFixedDelay(() -> {
            String overdue = client.overdue();
            if (overdue != null) LOG.warn("{}; /healthz says 503 with this cause until it answers", overdue);
        }, 1, 1, TimeUnit.SECONDS);
        return () -> watch.cancel(false);
    }

    /**
     * Starts the sync loop on {@code scheduler}, gated by {@code lifecycle}; every change the store records, and
     * every {@link #requestSync}, asks for a sync.
     */
    public void start(SyncRunner.Scheduler scheduler, Lifecycle lifecycle) {
        this.scheduler = scheduler;
        runner = new SyncRunner(new SyncRunner.Intervals(config.minSyncPeriod(), config.syncPeriod(),
                Duration.ofSeconds(1), config.syncPeriod()), request -> step(lifecycle), scheduler);
        store.onChange(() -> {
            for (IpFamily f : IpFamily.values()) {
                health.queued(f);
                metrics.queued(f);
            }
            runner.requestSync();
        });
    }

    /** The monitor's listener: another writer's change is repaired by a converging sync, backed off if it persists. */
    public TableChangeListener tamperResponse() {
        return new TamperResponse(tamper, metrics, clock, this::convergeNow, scheduler);
    }

    /**
     * Starts reading both tables back now, for the first sync: at a restart that overlaps the cluster's listing.
     * Call it after the nftables monitor started, so that a change made meanwhile discards it. Thread-safe.
     */
    public void readBackEarly() { proxySync.readBackEarly(); }

    /** Asks the loop for a sync; thread-safe. */
    public void requestSync() { runner.requestSync(); }

    private void convergeNow() {
        proxySync.requestConverge();
        runner.requestSync();
    }

    /** The sync loop is alive while it finished a run within two sync periods (it runs at least once per period). */
    public boolean alive() {
        return System.nanoTime() - lastRunNanos < config.syncPeriod().multipliedBy(2).plusSeconds(30).toNanos();
    }

    /** Stops the loop, finishing or abandoning the sync in progress; false when it was abandoned. */
    public boolean stop(Duration grace) { return runner == null || runner.stop(grace); }

    /** Closes the nft client. */
    public void closeClient() throws Exception { client.close(); }

    /** One run of the loop: the gate, the sync, and when the loop must come back without a change. */
    private SyncRunner.Outcome step(Lifecycle lifecycle) {
        try {
            if (!lifecycle.mayRun()) return SyncRunner.Outcome.DONE;
            Report r = sync(lifecycle::programmed);
            if (!r.success()) return SyncRunner.Outcome.FAILED;
            // Flushed chains are deleted by the first sync after their grace; without a follow-up, an idle proxy
            // would keep a deleted service's empty chain until the periodic run (upstream keeps it until any later
            // sync). The deadline is on the wall clock: one stepped back since would put it as far away as the step,
            // so the wait is never longer than the grace (KernelTable then takes the grace as run out).
            return proxySync.nextDeadline()
                    .map(at -> {
                        Duration wait = Duration.between(clock.instant(), at);
                        return SyncRunner.Outcome.again((wait.compareTo(KernelTable.STALE_CHAIN_GRACE) > 0 ? KernelTable.STALE_CHAIN_GRACE : wait)
                                .plusMillis(50));
                    })
                    .orElse(SyncRunner.Outcome.DONE);
        } finally {
            lastRunNanos = System.nanoTime();
        }
    }

    /**
     * The whole cluster, synced once on the calling thread ({@code run --once}): after a successful sync the stale
     * UDP conntrack entries go, as after every sync; no health-check servers, nothing runs on.
     */
    public Report once(ClusterSnapshot cluster) {
        store.replaceAll(cluster);
        store.servicesListed();
        store.endpointSlicesListed();
        Report r = syncTables();
        return r.success() ? new Report(r.result(), r.node(), followUps.cleanConntrack(r.result(), true)) : r;
    }

    /**
     * One sync of what the store holds: plan, models, kernel, health and metrics; then {@code programmed} (when
     * every table was) and the follow-ups.
     */
    public Report sync(Runnable programmed) {
        Report r = syncTables();
        if (!r.success()) return r;
        // The tables are programmed: the follow-ups below are not part of that.
        programmed.run();
        followUps.after(r.result(), r.node());
        return r;
    }

    private Report syncTables() {
        String hostname = config.hostnameOverride();
        NodeObject nodeObject = store.node(hostname);
        // A node running from manifests alone may have no Node object; that must not make /healthz fail.
        health.node(nodeObject != null || !nodeObjectOptional ? nodeObject
                : new NodeObject(new ObjectMeta(null, hostname, Map.of(), Map.of(), false), List.of(), List.of(), List.of()));
        NodeResolver.Resolved resolved = NodeResolver.resolve(config, nodeObject, interfaceAddresses());
        // Logged when they change, not every sync: a bad Node address stays bad until the Node is fixed.
        for (var d : resolved.diagnostics()) {
            if (!lastNodeDiagnostics.contains(d)) {
                LOG.warn("{}", d);
                metrics.invalidObject(d.kind(), d.field());
            }
        }
        lastNodeDiagnostics = resolved.diagnostics();
        List<Instant> triggers = store.drainTriggerTimes();
        // Drained before the objects are read: a change recorded meanwhile is seen now and again next time.
        ServiceChanges changes = store.drainChanges();
        Map<IpFamily, Long> cleanupFailuresBefore = new EnumMap<>(IpFamily.class);
        for (IpFamily f : IpFamily.values()) cleanupFailuresBefore.put(f, proxySync.kernel(f).failedStaleDeletes());
        ProxySync.Result result = proxySync.sync(store, changes, resolved.node(), clock.instant());
        record(result, triggers, cleanupFailuresBefore);
        return new Report(result, resolved.node(), null);
    }

    private void record(ProxySync.Result result, List<Instant> triggers, Map<IpFamily, Long> cleanupFailuresBefore) {
        for (IpFamily f : IpFamily.values()) {
            long n = proxySync.kernel(f).failedStaleDeletes() - cleanupFailuresBefore.get(f);
            for (long i = 0; i < n; i++) metrics.cleanupFailed(f);
        }
        boolean whole = result.level().wholeCluster();
        LOG.debug("sync core time={}us level={} services={}", result.coreTime().toNanos() / 1000, result.level(),
                whole ? -1 : result.deltas().size());
        // kube-proxy's "SyncProxyRules complete" line, shown from -v 2.
        SYNCS.info("sync done level={} reasons={} services={} results={}", result.level(), result.plan().reasons(),
                whole ? "all" : Integer.toString(result.deltas().size()), result.families().values());
        for (var d : result.logged()) metrics.invalidObject(d.kind(), d.field());
        result.plan().verifications().values().forEach(v -> metrics.tableVerification(v.family(), v.path()));
        Instant done = clock.instant();
        for (SyncResult r : result.families().values()) {
            if (r.success()) {
                metrics.sync(r.family(), r.level().wholeCluster(), r.duration(), r.commands());
                health.updated(r.family());
                for (Instant t : triggers) metrics.programmingLatency(r.family(), Duration.between(t, done));
                metrics.noLocalEndpoints(r.family(), result.noLocalInternal(r.family()), result.noLocalExternal(r.family()));
            } else {
                metrics.syncFailed(r.family());
            }
        }
    }

    private List<IpAddress> interfaceAddresses() {
        try {
            return node.interfaceAddresses();
        } catch (Exception e) {
            LOG.warn("cannot list interface addresses error={}; using the node IPs for nodeport-ips", e.toString());
            return null;
        }
    }
}
