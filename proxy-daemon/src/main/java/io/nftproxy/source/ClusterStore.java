package io.nftproxy.source;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.service.ProxyStateBuilder;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The change tracker every source feeds: watch handlers and the manifest watcher only record objects here, and a
 * real change (not a no-op update) asks the sync loop for a sync. Thread-safe; handlers never block on the kernel.
 *
 * <p>Besides the objects it records which Services changed since the sync loop last {@link #drainChanges drained}
 * them, by {@code namespace/name}: a Service object's change, or a change to an EndpointSlice whose
 * {@code kubernetes.io/service-name} label, before or after, names it. Slices are indexed by that Service, so a sync
 * reads one Service's objects without looking at the others. A Node or ServiceCIDR change is recorded as such
 * ({@link ServiceChanges.Wide}); how much a sync then does is the planner's decision, not the store's.
 *
 * <p>Nothing may be programmed before Services and EndpointSlices have both been listed once: with only one of
 * them, every service would look endpoint-less and be rejected ({@link #ready()}).
 */
public final class ClusterStore implements ClusterView {
    private final Map<String, ServiceObject> services = new ConcurrentHashMap<>();
    private final Map<String, EndpointSliceObject> slices = new ConcurrentHashMap<>();
    /** Service key to its slices by slice key; changed together with {@link #slices} under {@link #sliceLock}. */
    private final Map<String, Map<String, EndpointSliceObject>> slicesByService = new ConcurrentHashMap<>();
    private final Object sliceLock = new Object();
    private final Map<String, NodeObject> nodes = new ConcurrentHashMap<>();
    private final Map<String, ServiceCidrObject> cidrs = new ConcurrentHashMap<>();
    private final Map<String, Instant> pendingTriggers = new ConcurrentHashMap<>();
    private final Set<String> changedServices = ConcurrentHashMap.newKeySet();
    /** Changes that concern every Service since the last drain; the first drain hands over the whole cluster. */
    private final Set<ServiceChanges.Wide> wideChanges = ConcurrentHashMap.newKeySet();
    { wideChanges.add(ServiceChanges.Wide.WHOLE_CLUSTER); }
    private volatile boolean servicesListed;
    private volatile boolean slicesListed;
    private volatile boolean nodesListed = true;
    private volatile boolean cidrsListed = true;
    private volatile Runnable onChange = () -> { };
    // kube-proxy's change counters: every Service or EndpointSlice event delivered, and the real changes not synced yet.
    private final AtomicLong serviceEvents = new AtomicLong();
    private final AtomicLong sliceEvents = new AtomicLong();
    private final Set<String> servicesPending = ConcurrentHashMap.newKeySet();
    private final AtomicLong slicesPending = new AtomicLong();

    /**
     * kube-proxy's {@code sync_proxy_rules_service_changes_total}/{@code _pending} and {@code endpoint_changes_*}:
     * events seen (no-op updates included), and changes recorded since the last {@link #drainChanges} (Services
     * with a changed object; EndpointSlice changes).
     */
    public record ChangeCounts(long serviceEvents, int servicesPending, long endpointSliceEvents, long endpointSliceChangesPending) {}

    public ChangeCounts changeCounts() {
        return new ChangeCounts(serviceEvents.get(), servicesPending.size(), sliceEvents.get(), slicesPending.get());
    }

    private final Map<String, AtomicLong> undecodable = new ConcurrentHashMap<>();

    /** A source got an object of {@code kind} it could not decode (and skipped it, deleting any older version). */
    public void undecodable(String kind) { undecodable.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet(); }

    /** Objects skipped as undecodable so far, by kind. */
    public Map<String, Long> undecodableCounts() {
        Map<String, Long> out = new java.util.TreeMap<>();
        undecodable.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    /** Called after every recorded change and when the store first becomes ready; must not block. */
    public void onChange(Runnable r) { this.onChange = Objects.requireNonNull(r); }

    public void upsertService(ServiceObject s) {
        String k = key(s.meta());
        serviceEvents.incrementAndGet();
        if (!Objects.equals(services.put(k, s), s)) serviceChanged(k);
    }

    public void deleteService(ObjectMeta m) {
        String k = key(m);
        serviceEvents.incrementAndGet();
        if (services.remove(k) != null) serviceChanged(k);
    }

    private void serviceChanged(String k) {
        servicesPending.add(k);
        changed(k, null);
    }

    public void upsertEndpointSlice(EndpointSliceObject s) {
        String k = key(s.meta());
        EndpointSliceObject prev;
        sliceEvents.incrementAndGet();
        synchronized (sliceLock) {
            prev = slices.put(k, s);
            if (s.equals(prev)) return;
            if (prev != null) unindex(k, prev);
            index(k, s);
        }
        slicesPending.incrementAndGet();
        recordTrigger(s);
        changed(ProxyStateBuilder.serviceKey(s), prev == null ? null : ProxyStateBuilder.serviceKey(prev));
    }

    public void deleteEndpointSlice(ObjectMeta m) {
        String k = key(m);
        EndpointSliceObject prev;
        sliceEvents.incrementAndGet();
        synchronized (sliceLock) {
            prev = slices.remove(k);
            if (prev == null) return;
            unindex(k, prev);
        }
        slicesPending.incrementAndGet();
        changed(ProxyStateBuilder.serviceKey(prev), null);
    }

    public void upsertNode(NodeObject n) { if (!Objects.equals(nodes.put(key(n.meta()), n), n)) changedWide(ServiceChanges.Wide.NODE); }
    public void deleteNode(ObjectMeta m) { if (nodes.remove(key(m)) != null) changedWide(ServiceChanges.Wide.NODE); }
    public void upsertServiceCidr(ServiceCidrObject c) { if (!Objects.equals(cidrs.put(key(c.meta()), c), c)) changedWide(ServiceChanges.Wide.SERVICE_CIDRS); }
    public void deleteServiceCidr(ObjectMeta m) { if (cidrs.remove(key(m)) != null) changedWide(ServiceChanges.Wide.SERVICE_CIDRS); }

    public void servicesListed() { servicesListed = true; changed(null, null); }
    public void endpointSlicesListed() { slicesListed = true; changed(null, null); }

    /**
     * The first sync must also wait for this node's Node object and the ServiceCIDRs (a Kubernetes source): a sync
     * without them would program a node context that the next sync changes, rewriting the whole table.
     */
    public void awaitNodeAndServiceCidrs() {
        nodesListed = false;
        cidrsListed = false;
    }

    /** The Node list was delivered (or waiting for it was given up, with a warning). */
    public void nodesListed() { nodesListed = true; changed(null, null); }

    public void serviceCidrsListed() { cidrsListed = true; changed(null, null); }

    public boolean servicesAndSlicesListed() { return servicesListed && slicesListed; }

    /**
     * True once everything the first sync needs was delivered: Services and EndpointSlices listed and handed over
     * object by object, and (for a Kubernetes source) the Node and ServiceCIDRs too.
     */
    public boolean ready() { return servicesAndSlicesListed() && nodesListed && cidrsListed; }

    /** What the first sync still waits for, for the log; empty when {@link #ready}. */
    public List<String> waitingFor() {
        List<String> out = new ArrayList<>();
        if (!servicesListed) out.add("Services");
        if (!slicesListed) out.add("EndpointSlices");
        if (!nodesListed) out.add("Node");
        if (!cidrsListed) out.add("ServiceCIDRs");
        return out;
    }

    /**
     * Replaces everything with a complete new state (run --once's whole cluster), recording only what differs:
     * an unchanged reload requests no sync. A manifest directory is complete by itself: no Node or ServiceCIDR is
     * waited for.
     */
    public void replaceAll(ClusterSnapshot s) {
        Set<String> touched = new HashSet<>();
        touched.addAll(swapServices(s.services()));
        touched.addAll(swapEndpointSlices(s.endpointSlices()));
        Set<ServiceChanges.Wide> wide = EnumSet.noneOf(ServiceChanges.Wide.class);
        if (replace(nodes, byKey(s.nodes(), NodeObject::meta))) wide.add(ServiceChanges.Wide.NODE);
        if (replace(cidrs, byKey(s.serviceCidrs(), ServiceCidrObject::meta))) wide.add(ServiceChanges.Wide.SERVICE_CIDRS);
        nodesListed = true;
        cidrsListed = true;
        recordReplaced(touched, wide);
    }

    /** Every Service there is, after a (re)list: those missing are deleted, only real changes are recorded. */
    public void replaceServices(List<ServiceObject> all) { recordReplaced(swapServices(all), Set.of()); }

    /** Every EndpointSlice there is, after a (re)list. */
    public void replaceEndpointSlices(List<EndpointSliceObject> all) { recordReplaced(swapEndpointSlices(all), Set.of()); }

    /** Every Node the source watches (this node's, by field selector), after a (re)list. */
    public void replaceNodes(List<NodeObject> all) {
        recordReplaced(Set.of(), replace(nodes, byKey(all, NodeObject::meta)) ? Set.of(ServiceChanges.Wide.NODE) : Set.of());
    }

    public void replaceServiceCidrs(List<ServiceCidrObject> all) {
        recordReplaced(Set.of(), replace(cidrs, byKey(all, ServiceCidrObject::meta)) ? Set.of(ServiceChanges.Wide.SERVICE_CIDRS) : Set.of());
    }

    private void recordReplaced(Set<String> touched, Set<ServiceChanges.Wide> wide) {
        wideChanges.addAll(wide);
        changedServices.addAll(touched);
        if (!wide.isEmpty() || !touched.isEmpty()) changed(null, null);
    }

    private Set<String> swapServices(List<ServiceObject> all) {
        Set<String> touched = new HashSet<>();
        Map<String, ServiceObject> nextServices = byKey(all, ServiceObject::meta);
        for (String k : services.keySet()) if (!nextServices.containsKey(k)) touched.add(k);
        for (Map.Entry<String, ServiceObject> e : nextServices.entrySet()) {
            if (!e.getValue().equals(services.get(e.getKey()))) touched.add(e.getKey());
        }
        replace(services, nextServices);
        serviceEvents.addAndGet(touched.size());
        servicesPending.addAll(touched);
        return touched;
    }

    private Set<String> swapEndpointSlices(List<EndpointSliceObject> all) {
        Set<String> touched = new HashSet<>();
        Map<String, EndpointSliceObject> nextSlices = byKey(all, EndpointSliceObject::meta);
        synchronized (sliceLock) {
            for (String k : List.copyOf(slices.keySet())) {
                EndpointSliceObject now = nextSlices.get(k);
                EndpointSliceObject prev = slices.get(k);
                if (now == null || !now.equals(prev)) {
                    slices.remove(k);
                    unindex(k, prev);
                    touched.add(ProxyStateBuilder.serviceKey(prev));
                    // A changed slice counts once, below; a deleted one here.
                    if (now == null) {
                        slicesPending.incrementAndGet();
                        sliceEvents.incrementAndGet();
                    }
                }
            }
            for (Map.Entry<String, EndpointSliceObject> e : nextSlices.entrySet()) {
                if (e.getValue().equals(slices.get(e.getKey()))) continue;
                slicesPending.incrementAndGet();
                sliceEvents.incrementAndGet();
                recordTrigger(e.getValue());
                slices.put(e.getKey(), e.getValue());
                index(e.getKey(), e.getValue());
                touched.add(ProxyStateBuilder.serviceKey(e.getValue()));
            }
        }
        return touched;
    }

    /**
     * The Services changed since the last call, and the changes that concern them all (the first call hands over the
     * whole cluster). Call it before reading the objects: a change recorded meanwhile is then seen now and again by
     * the next drain.
     */
    public ServiceChanges drainChanges() {
        Set<ServiceChanges.Wide> wide = EnumSet.noneOf(ServiceChanges.Wide.class);
        wideChanges.removeIf(wide::add);
        servicesPending.clear();
        slicesPending.set(0);
        Set<String> keys = new HashSet<>();
        changedServices.removeIf(keys::add);
        return new ServiceChanges(wide, keys);
    }

    @Override public Set<String> serviceKeys() {
        Set<String> out = new HashSet<>(services.keySet());
        out.addAll(slicesByService.keySet());
        return out;
    }

    @Override public List<ServiceObject> services(String key) {
        ServiceObject s = services.get(key);
        return s == null ? List.of() : List.of(s);
    }

    @Override public List<EndpointSliceObject> endpointSlices(String key) {
        Map<String, EndpointSliceObject> m = slicesByService.get(key);
        return m == null ? List.of() : List.copyOf(m.values());
    }

    @Override public List<ServiceCidrObject> serviceCidrs() { return sorted(cidrs); }

    public int serviceCount() { return services.size(); }

    public int endpointSliceCount() { return slices.size(); }

    /** An immutable view of the current state, services and slices in key order for deterministic rendering. */
    public ClusterSnapshot snapshot() {
        return new ClusterSnapshot(sorted(services), sorted(slices), sorted(nodes), sorted(cidrs));
    }

    public NodeObject node(String name) { return nodes.get("/" + name); }

    /**
     * The oldest {@code last-change-trigger-time} of each slice changed since the last call: the start of the
     * network-programming latency that the sync which consumes them ends.
     */
    public List<Instant> drainTriggerTimes() {
        List<Instant> out = new ArrayList<>();
        for (String k : List.copyOf(pendingTriggers.keySet())) {
            Instant t = pendingTriggers.remove(k);
            if (t != null) out.add(t);
        }
        return out;
    }

    private void index(String sliceKey, EndpointSliceObject s) {
        slicesByService.computeIfAbsent(ProxyStateBuilder.serviceKey(s), k -> new ConcurrentHashMap<>()).put(sliceKey, s);
    }

    private void unindex(String sliceKey, EndpointSliceObject s) {
        slicesByService.computeIfPresent(ProxyStateBuilder.serviceKey(s), (k, m) -> {
            m.remove(sliceKey);
            return m.isEmpty() ? null : m;
        });
    }

    private void recordTrigger(EndpointSliceObject s) {
        String trigger = s.meta().annotations().get(EndpointSliceObject.TRIGGER_TIME_ANNOTATION);
        if (trigger == null) return;
        try {
            pendingTriggers.merge(key(s.meta()), Instant.parse(trigger), (a, b) -> a.isBefore(b) ? a : b);
        } catch (DateTimeParseException ignored) {
            // A malformed annotation only costs the latency metric for this change.
        }
    }

    private static <T> boolean replace(Map<String, T> m, Map<String, T> next) {
        boolean any = m.keySet().retainAll(next.keySet());
        for (Map.Entry<String, T> e : next.entrySet()) {
            if (!Objects.equals(m.put(e.getKey(), e.getValue()), e.getValue())) any = true;
        }
        return any;
    }

    /** Records the Services changed (either may be null) before asking for a sync, so the sync sees them. */
    private void changed(String service, String otherService) {
        if (service != null) changedServices.add(service);
        if (otherService != null) changedServices.add(otherService);
        onChange.run();
    }

    private void changedWide(ServiceChanges.Wide why) {
        wideChanges.add(why);
        changed(null, null);
    }

    private static <T> Map<String, T> byKey(List<T> objects, java.util.function.Function<T, ObjectMeta> meta) {
        Map<String, T> out = new HashMap<>();
        for (T o : objects) out.putIfAbsent(key(meta.apply(o)), o);
        return out;
    }

    private static <T> List<T> sorted(Map<String, T> m) {
        return m.entrySet().stream().sorted(Map.Entry.comparingByKey()).map(Map.Entry::getValue).toList();
    }

    /** Not {@link ObjectMeta#key}: a Service's key is {@link ProxyStateBuilder#serviceKey}, slash and all, as its slices'. */
    private static String key(ObjectMeta m) {
        return (m.namespace() == null ? "" : m.namespace()) + "/" + m.name();
    }
}
