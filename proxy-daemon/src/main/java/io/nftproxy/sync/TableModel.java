package io.nftproxy.sync;

import io.nftproxy.render.Renderer;
import io.nftproxy.render.ServicePortFragment;

import io.nftproxy.diff.Differ;
import io.nftproxy.nft.Chain;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Transaction;
import io.nftproxy.service.Endpoint;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.NodeContext;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ServicePort;
import io.nftproxy.service.ServicePortName;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The one model of what one family's table holds, kept across syncs; renders and diffs a change at the cost of
 * what changed, not of the cluster's size.
 * Each service port is rendered into a {@link ServicePortFragment} that is cached with its inputs; a change
 * re-renders only the changed ports and diffs a small table holding the skeleton, their old and new fragments
 * and the shared elements they touch, with the same {@link Differ} the full path uses. The result equals what
 * {@code Differ.diff(previous full table, Renderer.render(...))} would do to the kernel.
 *
 * <p>Protocol, as with {@link Differ}: apply each returned diff, then delete its stale chains in a later
 * transaction ({@link Differ#deletingChains}). Whether a change re-renders every port ({@link #rerender}: the node
 * context or the ServiceCIDRs changed) or compares inputs ({@link #sync}, {@link #update}) is the caller's decision
 * (the daemon's planner), not the model's. Not thread-safe: one sync loop owns it.
 */
public final class TableModel {
    /** A service port's new inputs; {@code port == null} means the service port is gone. */
    public record Change(ServicePortName name, ServicePort port, List<Endpoint> endpoints) {
        public Change {
            Objects.requireNonNull(name, "name");
            endpoints = endpoints == null ? List.of() : endpoints;
        }
    }

    private record Entry(ServicePort port, List<Endpoint> endpoints, ServicePortFragment fragment) {}

    private final Renderer renderer;
    private final IpFamily family;
    private NodeContext node;
    private List<IpPrefix> serviceCidrs = List.of();
    private boolean committed;
    private final TreeMap<ServicePortName, Entry> entries = new TreeMap<>();
    /**
     * Who contributes each element. Ports of one Service share their ClusterIP's cluster-ips element, and two
     * services may share a hairpin element; the table keeps the first contributor's in service-port order.
     */
    private final ElementOwners owners = new ElementOwners();
    private final Map<String, ServicePortName> chainOwners = new HashMap<>();
    private int noLocalInternal;
    private int noLocalExternal;

    public TableModel(Renderer renderer, IpFamily family, NodeContext node) {
        this.renderer = renderer;
        this.family = family;
        this.node = node;
    }

    public IpFamily family() { return family; }

    /**
     * Brings the model to {@code state} and returns the transaction from the previous state. Finds the changed
     * ports by comparing inputs (identity first, so a state built from shared objects costs a reference compare
     * per port); the first call returns the transaction that creates the whole table. The node context and the
     * ServiceCIDRs must be those of the last render: a change of either is a {@link #rerender}.
     */
    public Differ.Diff sync(ProxyState state, NodeContext sameNode) {
        if (state.family() != family) throw new IllegalArgumentException("family mismatch");
        if (!committed) return rerender(state, sameNode);
        if (!sameNode.equals(node) || !state.serviceCidrs().equals(serviceCidrs)) {
            throw new IllegalArgumentException("the node context or the ServiceCIDRs changed since the last render: that needs rerender()");
        }
        List<Change> changes = new ArrayList<>();
        int kept = 0;
        for (ServicePort sp : state.servicePorts().values()) {
            List<Endpoint> eps = state.endpointsOf(sp.name());
            Entry e = entries.get(sp.name());
            if (e != null) kept++;
            if (e == null || !same(e.port, sp) || !same(e.endpoints, eps)) changes.add(new Change(sp.name(), sp, eps));
        }
        if (kept < entries.size()) {
            for (ServicePortName n : entries.keySet()) {
                if (!state.servicePorts().containsKey(n)) changes.add(new Change(n, null, List.of()));
            }
        }
        return update(changes);
    }

    /** Applies explicit changes, for callers that track them; costs O(size of the changed ports). */
    public Differ.Diff update(Collection<Change> changes) {
        if (!committed) throw new IllegalStateException("the first sync must go through sync(state, node)");
        List<ServicePortFragment> before = new ArrayList<>();
        List<ServicePortFragment> after = new ArrayList<>();
        List<Change> effective = new ArrayList<>();
        List<ServicePortFragment> fresh = new ArrayList<>();
        Set<Element.ElementKey> touched = new LinkedHashSet<>();
        for (Change c : changes) {
            Entry old = entries.get(c.name());
            ServicePortFragment now = c.port() == null ? null : renderer.fragment(c.port(), c.endpoints(), node);
            if (old == null && now == null) continue;
            if (old != null && now != null && old.fragment.equals(now)) {
                entries.put(c.name(), new Entry(c.port(), c.endpoints(), old.fragment));
                continue;
            }
            effective.add(c);
            fresh.add(now);
            if (old != null) {
                before.add(old.fragment);
                for (Element e : old.fragment.elements()) touched.add(e.id());
            }
            if (now != null) {
                after.add(now);
                for (Element e : now.elements()) touched.add(e.id());
            }
        }
        if (effective.isEmpty()) return new Differ.Diff(new Transaction(family), List.of());

        Map<Element.ElementKey, Element> was = effectiveElements(touched);
        for (int i = 0; i < effective.size(); i++) {
            Change c = effective.get(i);
            Entry old = entries.remove(c.name());
            if (old != null) forget(old.fragment);
            if (c.port() != null) remember(new Entry(c.port(), c.endpoints(), fresh.get(i)));
        }
        Map<Element.ElementKey, Element> is = effectiveElements(touched);
        // Elements that an unchanged port owns on either side point at its chains: both sides get them alike.
        Set<ServicePortName> changed = new HashSet<>();
        for (Change c : effective) changed.add(c.name());
        Set<String> bystanders = new LinkedHashSet<>();
        for (Map<Element.ElementKey, Element> side : List.of(was, is)) {
            for (Element e : side.values()) {
                String target = e.value() == null ? null : e.value().target();
                ServicePortName owner = target == null ? null : chainOwners.get(target);
                if (owner != null && !changed.contains(owner)) bystanders.add(target);
            }
        }
        return Differ.diff(partialTable(before, was, bystanders), partialTable(after, is, bystanders));
    }

    /** The whole table as it now stands: O(size of the table), for full syncs, checks and the tracer. */
    public Renderer.Table table() {
        return renderer.table(family, node, serviceCidrs, entries.values().stream().map(Entry::fragment).toList());
    }

    public int servicePortCount() { return entries.size(); }

    /** Service ports without a local endpoint for internal traffic, as {@link Renderer.Table} counts them. */
    public int noLocalInternal() { return noLocalInternal; }

    /** Service ports without a local endpoint for external traffic, as {@link Renderer.Table} counts them. */
    public int noLocalExternal() { return noLocalExternal; }

    /**
     * Forgets everything and renders every service port of {@code state} afresh; returns the whole table, for a
     * converging sync that diffs against the kernel. Later {@link #update}s continue from this state.
     */
    public Renderer.Table rebuild(ProxyState state, NodeContext newNode) {
        if (state.family() != family) throw new IllegalArgumentException("family mismatch");
        renderAll(state, newNode);
        return table();
    }

    /** Renders every port of {@code state} afresh and returns the diff of the whole table from the previous one. */
    public Differ.Diff rerender(ProxyState state, NodeContext newNode) {
        if (state.family() != family) throw new IllegalArgumentException("family mismatch");
        TableContent old = committed ? table().table() : null;
        renderAll(state, newNode);
        return Differ.diff(old, table().table());
    }

    private void renderAll(ProxyState state, NodeContext newNode) {
        entries.clear();
        owners.clear();
        chainOwners.clear();
        noLocalInternal = 0;
        noLocalExternal = 0;
        node = newNode;
        serviceCidrs = state.serviceCidrs();
        for (ServicePort sp : state.servicePorts().values()) {
            List<Endpoint> eps = state.endpointsOf(sp.name());
            remember(new Entry(sp, eps, renderer.fragment(sp, eps, node)));
        }
        committed = true;
    }

    private void remember(Entry e) {
        ServicePortFragment f = e.fragment;
        entries.put(f.name(), e);
        for (Element el : f.elements()) owners.add(f.name(), el);
        for (Chain c : f.chains()) chainOwners.put(c.name(), f.name());
        if (f.noLocalInternal()) noLocalInternal++;
        if (f.noLocalExternal()) noLocalExternal++;
    }

    private void forget(ServicePortFragment f) {
        for (Element el : f.elements()) owners.remove(f.name(), el.id());
        for (Chain c : f.chains()) chainOwners.remove(c.name(), f.name());
        if (f.noLocalInternal()) noLocalInternal--;
        if (f.noLocalExternal()) noLocalExternal--;
    }

    /** The element the full table holds for each key: the first contributor's, in service-port order. */
    private Map<Element.ElementKey, Element> effectiveElements(Set<Element.ElementKey> keys) {
        Map<Element.ElementKey, Element> out = new LinkedHashMap<>();
        for (Element.ElementKey k : keys) {
            Element e = owners.first(k);
            if (e != null) out.put(k, e);
        }
        return out;
    }

    /**
     * The skeleton, the given fragments' sets, chains and rules, and the given elements: what the differ needs to
     * see of one side. An element kept from an unchanged port targets that port's chain, which is added with its
     * rules on both sides alike, so the differ leaves it alone.
     */
    private TableContent partialTable(List<ServicePortFragment> fragments, Map<Element.ElementKey, Element> elements,
                                      Set<String> bystanders) {
        TableContent.Builder t = renderer.skeleton(family, node, serviceCidrs);
        for (ServicePortFragment f : fragments) {
            f.sets().forEach(t::set);
            f.chains().forEach(t::chain);
        }
        for (ServicePortFragment f : fragments) f.rules().forEach(t::rule);
        for (String c : bystanders) if (!t.hasChain(c)) bystanderChain(t, c);
        elements.values().forEach(t::element);
        return t.build();
    }

    private void bystanderChain(TableContent.Builder t, String chain) {
        ServicePortFragment f = entries.get(chainOwners.get(chain)).fragment;
        for (Chain c : f.chains()) if (c.name().equals(chain)) t.chain(c);
        for (Rule r : f.rules()) {
            if (!r.chain().equals(chain)) continue;
            for (String target : r.targets()) if (!t.hasChain(target) && chainOwners.containsKey(target)) bystanderChain(t, target);
            for (String s : r.setRefs()) if (!t.hasSet(s)) f.sets().stream().filter(x -> x.name().equals(s)).forEach(t::set);
            t.rule(r);
        }
    }

    private static boolean same(Object a, Object b) { return a == b || a.equals(b); }
}
