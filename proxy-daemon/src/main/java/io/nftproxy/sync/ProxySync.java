package io.nftproxy.sync;

import io.nftproxy.source.ClusterView;
import io.nftproxy.source.ServiceChanges;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.diff.Differ;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.nft.TableContent;
import io.nftproxy.service.Diagnostic;
import io.nftproxy.service.Endpoint;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;
import io.nftproxy.service.ServiceClaims;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ProxyStateBuilder;
import io.nftproxy.service.ServicePort;
import io.nftproxy.service.ServicePortName;
import io.nftproxy.render.Renderer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * One sync of the whole proxy: both families' tables from the cluster and the node. Owned by one thread.
 *
 * <p>Three parts, one job each: {@link SyncPlanner} decides how much to do, each family's {@link TableModel}
 * is the one model of what its table holds (and computes the diff of a change), and each {@link KernelTable}
 * commits that diff or, when the plan says {@link SyncLevel#CONVERGE}, converges on the whole table by reading the
 * kernel back.
 *
 * <p>A partial sync costs what the changed Services ({@link ServiceChanges}) are, not what the cluster is: it
 * validates only those Services ({@link ProxyStateBuilder#buildService}), turns their ports into
 * {@link TableModel.Change}s and commits the model's exact diff. A rebuild or converging sync ({@link SyncLevel})
 * validates every Service afresh.
 *
 * <p>Diagnostics (objects skipped as invalid) are logged once per object and reason: a sync every second must not
 * repeat the same warning every second. An object is logged again when its reason changes, or when it was fixed
 * and breaks again.
 */
public final class ProxySync {
    private static final Logger LOG = LoggerFactory.getLogger(ProxySync.class);

    /** What one sync did; the lazily built parts are valid until the next sync only. */
    public final class Result {
        private final Map<IpFamily, SyncResult> families;
        private final List<Diagnostic> diagnostics;
        private final List<Diagnostic> logged;
        private final SyncPlanner.Plan plan;
        private final List<ServiceDelta> deltas;
        private final Duration coreTime;
        private final long generation;
        private final Map<IpFamily, ProxyState> states = new EnumMap<>(IpFamily.class);

        private Result(Map<IpFamily, SyncResult> families, List<Diagnostic> diagnostics, List<Diagnostic> logged,
                       SyncPlanner.Plan plan, List<ServiceDelta> deltas, Duration coreTime, Map<IpFamily, ProxyState> states) {
            this.families = families;
            this.diagnostics = diagnostics;
            this.logged = logged;
            this.plan = plan;
            this.deltas = deltas;
            this.coreTime = coreTime;
            this.generation = ProxySync.this.generation;
            this.states.putAll(states);
        }

        public Map<IpFamily, SyncResult> families() { return families; }

        public boolean success() { return families.values().stream().allMatch(SyncResult::success); }

        /** Every current diagnostic, of every Service and of the ServiceCIDRs. */
        public List<Diagnostic> diagnostics() { return diagnostics; }

        /** Those of {@link #diagnostics} logged now: new, or with a new reason. */
        public List<Diagnostic> logged() { return logged; }

        /** How much this sync covered; above {@link SyncLevel#PARTIAL}, {@link #deltas} is empty and means nothing. */
        public SyncLevel level() { return plan.level(); }

        /** What the planner decided for this sync, with its reasons. */
        public SyncPlanner.Plan plan() { return plan; }

        /** The Services a partial sync rebuilt, before and after. */
        public List<ServiceDelta> deltas() { return deltas; }

        /** CPU-side time of the sync: validation, rendering and diffing, without the kernel's part. */
        public Duration coreTime() { return coreTime; }

        /** The family's whole validated state; O(size of the cluster) on first call, so ask only when needed. */
        public ProxyState state(IpFamily f) {
            current();
            return states.computeIfAbsent(f, ProxySync.this::wholeState);
        }

        /** Service ports without local endpoints, internal and external traffic, as the table counts them. */
        public int noLocalInternal(IpFamily f) { current(); return models.get(f).noLocalInternal(); }

        public int noLocalExternal(IpFamily f) { current(); return models.get(f).noLocalExternal(); }

        private void current() {
            if (generation != ProxySync.this.generation) throw new IllegalStateException("a later sync replaced this result's state");
        }

        @Override public String toString() { return families.values().toString(); }
    }

    private final SyncPlanner planner;
    private final Map<IpFamily, KernelTable> kernel = new EnumMap<>(IpFamily.class);
    private final Map<IpFamily, TableModel> models = new EnumMap<>(IpFamily.class);
    /** Every Service key's state per family, as of the last sync. */
    private final Map<String, Map<IpFamily, ProxyState>> services = new HashMap<>();
    /** Diagnostics per Service key, both families merged; keys without any are absent. */
    private final Map<String, List<Diagnostic>> diagnosticsByService = new TreeMap<>();
    private final Map<IpFamily, ProxyState> cidrStates = new EnumMap<>(IpFamily.class);
    private List<Diagnostic> cidrDiagnostics = List.of();
    /** kind/object/field/reason of each diagnostic logged. */
    private final Set<String> logged = new HashSet<>();
    /** The daemon's own listening TCP ports, never given to a Service as a node port. */
    private final Map<Integer, String> reservedPorts;
    private final boolean refuseAddressOverlaps;
    /** Who holds each node port, of every Service as of the last sync. */
    private ServiceClaims claims = ServiceClaims.none();
    private long generation;

    /**
     * @param verifier      proves a table unchanged on the timer without listing it ({@link GenerationTracker#verify});
     *                      null: the timer converges by reading the tables back every time
     * @param reservedPorts TCP ports the daemon listens on, with what listens there; no Service gets them as node ports
     */
    public ProxySync(NftClient client, SyncPlanner.Verifier verifier, Renderer renderer, Duration convergeInterval,
                     Map<Integer, String> reservedPorts) {
        this.reservedPorts = Map.copyOf(reservedPorts);
        this.refuseAddressOverlaps = renderer.refusesAddressOverlaps();
        planner = new SyncPlanner(convergeInterval, verifier);
        for (IpFamily f : IpFamily.values()) {
            kernel.put(f, new KernelTable(f, client));
            models.put(f, new TableModel(renderer, f, null));
        }
    }

    public KernelTable kernel(IpFamily f) { return kernel.get(f); }

    /** Who is told of each committed part of a transaction cut into parts, in either family. */
    public void progress(ApplyProgress p) { kernel.values().forEach(k -> k.progress(p)); }

    /** The next sync converges both tables: for tampering reported by the monitor, say. Thread-safe. */
    public void requestConverge() {
        kernel.values().forEach(KernelTable::discardEarlyReadBack);
        planner.requestConverge();
    }

    /**
     * Starts reading both tables back now, for the first sync: at a restart that overlaps the cluster's listing.
     * Call it after the nftables monitor started, so that a change made meanwhile discards it. Thread-safe.
     */
    public void readBackEarly() { kernel.values().forEach(KernelTable::readBackEarly); }

    /** When the sync loop must run again even if nothing changes: flushed chains wait for their delete. */
    public Optional<Instant> nextDeadline() {
        return kernel.values().stream().map(KernelTable::nextStaleChainDeadline).flatMap(Optional::stream).min(Instant::compareTo);
    }

    /** A sync of the whole cluster {@code snapshot}, handed over at once. */
    public Result sync(ClusterSnapshot snapshot, NodeContext node, Instant now) {
        return sync(ClusterView.of(snapshot), ServiceChanges.WHOLE_CLUSTER, node, now);
    }

    /**
     * Brings both tables to the cluster's state, rebuilding only the {@code changed} Services when nothing forces
     * a rebuild or converge ({@link SyncPlanner}). The caller must have drained {@code changed} before reading {@code cluster}.
     */
    public Result sync(ClusterView cluster, ServiceChanges changed, NodeContext node, Instant now) {
        generation++;
        try {
            return syncOrThrow(cluster, changed, node, now);
        } catch (RuntimeException | Error e) {
            // Half-updated Service states and models would make the next partial diff wrong: start over.
            planner.abandoned();
            throw e;
        }
    }

    private Result syncOrThrow(ClusterView cluster, ServiceChanges changed, NodeContext node, Instant now) {
        long t0 = System.nanoTime();
        long kernelNanos = 0;
        SyncPlanner.Plan plan = planner.plan(changed, node, now);
        if (plan.level().wholeCluster()) LOG.info("{} sync: {}; converging {}", plan.level(), plan.reasons(), plan.converge());
        for (GenerationTracker.Verification v : plan.verifications().values()) LOG.info("periodic verification: {}", v);
        Map<IpFamily, SyncResult> results = new EnumMap<>(IpFamily.class);
        List<ServiceDelta> deltas = List.of();
        Map<IpFamily, ProxyState> states = new EnumMap<>(IpFamily.class);
        // A ServiceCIDR change recorded after the drain is read here but reaches the planner only next time.
        boolean cidrsMoved = false;
        if (plan.level().wholeCluster()) cidrsMoved = rebuildAll(cluster, node);
        else deltas = rebuild(cluster, changed.services(), node.nodeName());
        for (IpFamily f : IpFamily.values()) {
            TableModel m = models.get(f);
            SyncLevel level = plan.level(f);
            long k0;
            if (level == SyncLevel.CONVERGE) {
                TableContent table = m.rebuild(states.computeIfAbsent(f, this::wholeState), node).table();
                k0 = System.nanoTime();
                results.put(f, kernel.get(f).converge(table, now));
            } else {
                Differ.Diff d = level == SyncLevel.PARTIAL ? m.update(changes(deltas, f))
                        : plan.rerender() || cidrsMoved ? m.rerender(states.computeIfAbsent(f, this::wholeState), node)
                        : m.sync(states.computeIfAbsent(f, this::wholeState), node);
                k0 = System.nanoTime();
                results.put(f, kernel.get(f).commit(d, level, now));
            }
            kernelNanos += System.nanoTime() - k0;
        }
        planner.done(plan, results, node, now);
        List<Diagnostic> diags = allDiagnostics();
        List<Diagnostic> fresh = logNewDiagnostics(diags);
        Duration core = Duration.ofNanos(System.nanoTime() - t0 - kernelNanos);
        return new Result(results, diags, fresh, plan, deltas, core, states);
    }

    /** Rebuilds every Service's state; returns whether the ServiceCIDRs' states differ from the last ones. */
    private boolean rebuildAll(ClusterView cluster, NodeContext node) {
        String nodeName = node.nodeName();
        services.clear();
        diagnosticsByService.clear();
        claims = new ServiceClaims(reservedPorts, node.ownAddresses(), refuseAddressOverlaps);
        Set<String> keys = cluster.serviceKeys();
        for (String key : keys) claims.put(key, cluster.services(key));
        for (String key : keys) put(key, build(cluster, key, nodeName));
        ClusterSnapshot cidrsOnly = new ClusterSnapshot(List.of(), List.of(), List.of(), cluster.serviceCidrs());
        boolean moved = false;
        for (IpFamily f : IpFamily.values()) {
            ProxyState before = cidrStates.put(f, ProxyStateBuilder.build(cidrsOnly, f, nodeName));
            moved |= before == null || !before.serviceCidrs().equals(cidrStates.get(f).serviceCidrs());
        }
        cidrDiagnostics = cidrStates.values().stream().flatMap(st -> st.diagnostics().stream()).distinct().toList();
        return moved;
    }

    private List<ServiceDelta> rebuild(ClusterView cluster, Set<String> keys, String nodeName) {
        List<ServiceDelta> out = new ArrayList<>();
        // A Service that takes or frees a node port changes the outcome of the other claimants: rebuild them too.
        Set<String> all = new HashSet<>(keys);
        for (String key : keys) all.addAll(claims.put(key, cluster.services(key)));
        for (String key : all) {
            Map<IpFamily, ProxyState> before = services.getOrDefault(key, EMPTY);
            Map<IpFamily, ProxyState> after = build(cluster, key, nodeName);
            put(key, after);
            out.add(new ServiceDelta(key, before, after));
        }
        return out;
    }

    private static final Map<IpFamily, ProxyState> EMPTY =
            Collections.unmodifiableMap(perFamily(f -> new ProxyState(f, new TreeMap<>(), Map.of(), List.of(), List.of())));

    private static Map<IpFamily, ProxyState> perFamily(Function<IpFamily, ProxyState> state) {
        Map<IpFamily, ProxyState> m = new EnumMap<>(IpFamily.class);
        for (IpFamily f : IpFamily.values()) m.put(f, state.apply(f));
        return m;
    }

    private Map<IpFamily, ProxyState> build(ClusterView cluster, String key, String nodeName) {
        var svc = cluster.services(key);
        var slices = cluster.endpointSlices(key);
        if (svc.isEmpty() && slices.isEmpty()) return EMPTY;
        return perFamily(f -> ProxyStateBuilder.buildService(svc, slices, f, nodeName, claims));
    }

    private void put(String key, Map<IpFamily, ProxyState> states) {
        if (states == EMPTY) services.remove(key);
        else services.put(key, states);
        // Family-independent objects (bad names, say) are reported once, from the IPv4 pass, as Renderer does.
        List<Diagnostic> d = states.values().stream().flatMap(st -> st.diagnostics().stream()).distinct().toList();
        if (d.isEmpty()) diagnosticsByService.remove(key);
        else diagnosticsByService.put(key, d);
    }

    /** The renderer's changes of one family: every port of a rebuilt Service, and the ports it no longer has. */
    private static List<TableModel.Change> changes(List<ServiceDelta> deltas, IpFamily f) {
        List<TableModel.Change> out = new ArrayList<>();
        for (ServiceDelta d : deltas) {
            ProxyState before = d.before(f);
            ProxyState after = d.after(f);
            for (ServicePortName n : before.servicePorts().keySet()) {
                if (!after.servicePorts().containsKey(n)) out.add(new TableModel.Change(n, null, List.of()));
            }
            for (ServicePort sp : after.servicePorts().values()) {
                out.add(new TableModel.Change(sp.name(), sp, after.endpointsOf(sp.name())));
            }
        }
        return out;
    }

    /** The family's state as {@link ProxyStateBuilder#build} would give it for the whole cluster. */
    private ProxyState wholeState(IpFamily f) {
        TreeMap<ServicePortName, ServicePort> ports = new TreeMap<>();
        Map<ServicePortName, List<Endpoint>> endpoints = new HashMap<>();
        List<Diagnostic> diags = new ArrayList<>();
        for (Map<IpFamily, ProxyState> m : services.values()) {
            ProxyState st = m.get(f);
            ports.putAll(st.servicePorts());
            endpoints.putAll(st.endpoints());
            diags.addAll(st.diagnostics());
        }
        ProxyState cidrs = cidrStates.get(f);
        diags.addAll(cidrs.diagnostics());
        return new ProxyState(f, ports, endpoints, cidrs.serviceCidrs(), diags);
    }

    private List<Diagnostic> allDiagnostics() {
        if (diagnosticsByService.isEmpty()) return cidrDiagnostics;
        return Stream.concat(diagnosticsByService.values().stream().flatMap(List::stream), cidrDiagnostics.stream()).toList();
    }

    private List<Diagnostic> logNewDiagnostics(List<Diagnostic> diags) {
        Set<String> present = new HashSet<>();
        List<Diagnostic> fresh = new ArrayList<>();
        for (Diagnostic d : diags) {
            // With the reason in the key, two problems of one field (two bad externalIPs) are each logged once.
            String key = d.kind() + "\u0000" + d.object() + "\u0000" + d.field() + "\u0000" + d.reason();
            present.add(key);
            if (logged.add(key)) fresh.add(d);
        }
        // Forget fixed objects, so that breaking again is logged again.
        logged.retainAll(present);
        for (Diagnostic d : fresh) LOG.warn("{}", d);
        return fresh;
    }
}
