package io.nftproxy.render;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Value;
import io.nftproxy.service.Diagnostic;
import io.nftproxy.service.Endpoint;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ProxyStateBuilder;
import io.nftproxy.service.ServiceClaims;
import io.nftproxy.service.ServicePort;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Renders the desired {@code kube-proxy} tables from cluster state and node context. Pure: no I/O, no clock, no
 * logging; what was skipped comes back as {@link Diagnostic} values.
 */
public final class Renderer {
    private final TableLayout layout;
    private final boolean refuseAddressOverlaps;

    /** A renderer writing the endpoint picks in {@code layout}. */
    public Renderer(TableLayout layout) {
        this(layout, false);
    }

    private Renderer(TableLayout layout, boolean refuseAddressOverlaps) {
        this.layout = java.util.Objects.requireNonNull(layout, "layout");
        this.refuseAddressOverlaps = refuseAddressOverlaps;
    }

    /**
     * This renderer, but an externalIP or LoadBalancer IP that is another Service's ClusterIP or this node's address
     * is skipped instead of kept with a warning (see {@link ServiceClaims#overlap}).
     */
    public Renderer refusingAddressOverlaps() { return new Renderer(layout, true); }

    public boolean refusesAddressOverlaps() { return refuseAddressOverlaps; }

    /** kube-proxy 1.36's exact rule forms. */
    public static Renderer upstream() { return new Renderer(TableLayout.UPSTREAM); }

    /** Both families' tables, the validated states they were rendered from, and what was skipped. */
    public record Rendering(Map<IpFamily, Table> tables, Map<IpFamily, ProxyState> states, List<Diagnostic> diagnostics) {
        public TableContent table(IpFamily f) { return tables.get(f).table(); }

        public ProxyState state(IpFamily f) { return states.get(f); }
    }

    /** One family's table and its per-sync counters. */
    public record Table(TableContent table, int noLocalInternal, int noLocalExternal) {}

    public Rendering render(ClusterSnapshot snapshot, NodeContext node) {
        Map<IpFamily, Table> tables = new EnumMap<>(IpFamily.class);
        Map<IpFamily, ProxyState> states = new EnumMap<>(IpFamily.class);
        List<Diagnostic> diags = new ArrayList<>();
        ServiceClaims claims = ServiceClaims.of(snapshot.services(), java.util.Map.of(), node.ownAddresses(),
                refuseAddressOverlaps);
        for (IpFamily f : IpFamily.values()) {
            ProxyState state = ProxyStateBuilder.build(snapshot, f, node.nodeName(), claims);
            states.put(f, state);
            // Family-independent objects (bad names, say) are reported once, from the IPv4 pass.
            for (Diagnostic d : state.diagnostics()) if (!diags.contains(d)) diags.add(d);
            tables.put(f, render(state, node));
        }
        return new Rendering(tables, states, diags);
    }

    public Table render(ProxyState state, NodeContext node) {
        // Lazily: each fragment is garbage once added, as in a render without fragments.
        return table(state.family(), node, state.serviceCidrs(), () -> state.servicePorts().values().stream()
                .map(sp -> fragment(sp, state.endpointsOf(sp.name()), node)).iterator());
    }

    /** The skeleton, the fragments in service-port order, then the node's own elements, which upstream adds last. */
    public Table table(IpFamily family, NodeContext node, List<IpPrefix> serviceCidrs, Iterable<ServicePortFragment> fragments) {
        TableContent.Builder t = skeleton(family, node, serviceCidrs);
        int noLocalInternal = 0, noLocalExternal = 0;
        for (ServicePortFragment f : fragments) {
            f.addTo(t);
            if (f.noLocalInternal()) noLocalInternal++;
            if (f.noLocalExternal()) noLocalExternal++;
        }
        if (t.hasSet(TableSkeleton.NODEPORT_IPS)) {
            for (IpAddress ip : node.nodePortIPs(family)) {
                t.element(new Element(TableSkeleton.NODEPORT_IPS, List.of(new Value.Addr(ip)), null, null));
            }
        }
        return new Table(t.build(), noLocalInternal, noLocalExternal);
    }

    /** One service port's contribution; a pure function of its arguments and this renderer's options. */
    public ServicePortFragment fragment(ServicePort sp, List<Endpoint> endpoints, NodeContext node) {
        return ServicePortRules.fragment(sp, endpoints, node, layout);
    }

    /** The table without any service port: base chains, dispatch chains and rules, empty sets. */
    public TableContent.Builder skeleton(IpFamily family, NodeContext node, List<IpPrefix> serviceCidrs) {
        TableContent.Builder t = TableContent.builder(family);
        TableSkeleton.write(t, family, node, serviceCidrs, layout);
        return t;
    }
}
