package io.nftproxy.source;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The change tracker every source feeds: watch handlers and the manifest watcher only record objects here, and a
 * real change (not a no-op update) asks the sync loop for a sync. The sync loop takes an immutable snapshot.
 * Thread-safe; handlers never block on the kernel.
 *
 * <p>Nothing may be programmed before Services and EndpointSlices have both been listed once: with only one of
 * them, every service would look endpoint-less and be rejected ({@link #ready()}).
 */
public final class ClusterStore {
    private final Map<String, ServiceObject> services = new ConcurrentHashMap<>();
    private final Map<String, EndpointSliceObject> slices = new ConcurrentHashMap<>();
    private final Map<String, NodeObject> nodes = new ConcurrentHashMap<>();
    private final Map<String, ServiceCidrObject> cidrs = new ConcurrentHashMap<>();
    private final Map<String, Instant> pendingTriggers = new ConcurrentHashMap<>();
    private final AtomicLong changes = new AtomicLong();
    private volatile boolean servicesListed;
    private volatile boolean slicesListed;
    private volatile Runnable onChange = () -> { };

    /** Called after every recorded change and when the store first becomes ready; must not block. */
    public void onChange(Runnable r) { this.onChange = Objects.requireNonNull(r); }

    public void upsertService(ServiceObject s) { put(services, key(s.meta()), s); }
    public void deleteService(ObjectMeta m) { remove(services, key(m)); }
    public void upsertEndpointSlice(EndpointSliceObject s) {
        if (!s.equals(slices.get(key(s.meta())))) recordTrigger(s);
        put(slices, key(s.meta()), s);
    }
    public void deleteEndpointSlice(ObjectMeta m) { remove(slices, key(m)); }
    public void upsertNode(NodeObject n) { put(nodes, key(n.meta()), n); }
    public void deleteNode(ObjectMeta m) { remove(nodes, key(m)); }
    public void upsertServiceCidr(ServiceCidrObject c) { put(cidrs, key(c.meta()), c); }
    public void deleteServiceCidr(ObjectMeta m) { remove(cidrs, key(m)); }

    public void servicesListed() { servicesListed = true; changed(); }
    public void endpointSlicesListed() { slicesListed = true; changed(); }

    /** True once both Services and EndpointSlices have been listed. */
    public boolean ready() { return servicesListed && slicesListed; }

    /**
     * Replaces everything with a complete new state (a manifest directory reload), recording only what differs:
     * an unchanged reload requests no sync.
     */
    public void replaceAll(ClusterSnapshot s) {
        boolean any = replace(services, s.services().stream().collect(java.util.stream.Collectors.toMap(x -> key(x.meta()), x -> x, (a, b) -> a)));
        for (EndpointSliceObject e : s.endpointSlices()) if (!e.equals(slices.get(key(e.meta())))) recordTrigger(e);
        any |= replace(slices, s.endpointSlices().stream().collect(java.util.stream.Collectors.toMap(x -> key(x.meta()), x -> x, (a, b) -> a)));
        any |= replace(nodes, s.nodes().stream().collect(java.util.stream.Collectors.toMap(x -> key(x.meta()), x -> x, (a, b) -> a)));
        any |= replace(cidrs, s.serviceCidrs().stream().collect(java.util.stream.Collectors.toMap(x -> key(x.meta()), x -> x, (a, b) -> a)));
        if (any) changed();
    }

    /** How many real changes were recorded so far; the sync loop compares it to skip no-op runs. */
    public long changeCount() { return changes.get(); }

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

    private void recordTrigger(EndpointSliceObject s) {
        String trigger = s.meta().annotations().get(EndpointSliceObject.TRIGGER_TIME_ANNOTATION);
        if (trigger == null) return;
        try {
            pendingTriggers.merge(key(s.meta()), Instant.parse(trigger), (a, b) -> a.isBefore(b) ? a : b);
        } catch (DateTimeParseException ignored) {
            // A malformed annotation only costs the latency metric for this change.
        }
    }

    private <T> boolean put(Map<String, T> m, String key, T value) {
        T prev = m.put(key, value);
        if (Objects.equals(prev, value)) return false;
        changed();
        return true;
    }

    private <T> void remove(Map<String, T> m, String key) {
        if (m.remove(key) != null) changed();
    }

    private static <T> boolean replace(Map<String, T> m, Map<String, T> next) {
        boolean any = m.keySet().retainAll(next.keySet());
        for (Map.Entry<String, T> e : next.entrySet()) {
            if (!Objects.equals(m.put(e.getKey(), e.getValue()), e.getValue())) any = true;
        }
        return any;
    }

    private void changed() {
        changes.incrementAndGet();
        onChange.run();
    }

    private static <T> List<T> sorted(Map<String, T> m) {
        return m.entrySet().stream().sorted(Map.Entry.comparingByKey()).map(Map.Entry::getValue).toList();
    }

    private static String key(ObjectMeta m) {
        return (m.namespace() == null ? "" : m.namespace()) + "/" + m.name();
    }
}
