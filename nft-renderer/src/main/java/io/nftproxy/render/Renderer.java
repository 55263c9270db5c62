package io.nftproxy.render;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.nft.DesiredTable;
import io.nftproxy.proxy.Diagnostic;
import io.nftproxy.proxy.IpFamily;
import io.nftproxy.proxy.NodeContext;
import io.nftproxy.proxy.ProxyState;
import io.nftproxy.proxy.ProxyStateBuilder;
import io.nftproxy.proxy.ServicePort;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Renders the desired {@code kube-proxy} tables from cluster state and node context. Pure: no I/O, no clock, no
 * logging; what was skipped comes back as {@link Diagnostic} values.
 */
public final class Renderer {
    private final boolean directSingleDnat;

    /** @param directSingleDnat write {@code dnat to ip:port} for a single endpoint (upstream master) instead of 1.36's map */
    public Renderer(boolean directSingleDnat) {
        this.directSingleDnat = directSingleDnat;
    }

    /** kube-proxy 1.36's exact rule forms. */
    public static Renderer upstream() { return new Renderer(false); }

    /** The result for both families. */
    public record Rendering(Map<IpFamily, Table> tables, List<Diagnostic> diagnostics) {
        public DesiredTable table(IpFamily f) { return tables.get(f).table(); }
    }

    /** One family's table and its per-sync counters. */
    public record Table(DesiredTable table, int noLocalInternal, int noLocalExternal) {}

    public Rendering render(ClusterSnapshot snapshot, NodeContext node) {
        Map<IpFamily, Table> tables = new EnumMap<>(IpFamily.class);
        List<Diagnostic> diags = new ArrayList<>();
        for (IpFamily f : IpFamily.values()) {
            ProxyState state = ProxyStateBuilder.build(snapshot, f, node.nodeName());
            // Family-independent objects (bad names, say) are reported once, from the IPv4 pass.
            for (Diagnostic d : state.diagnostics()) if (!diags.contains(d)) diags.add(d);
            tables.put(f, render(state, node));
        }
        return new Rendering(tables, diags);
    }

    public Table render(ProxyState state, NodeContext node) {
        DesiredTable.Builder t = DesiredTable.builder(state.family());
        TableSkeleton.write(t, state.family(), node, state.serviceCidrs());
        ServicePortRules ports = new ServicePortRules(t, node, directSingleDnat);
        int noLocalInternal = 0, noLocalExternal = 0;
        for (ServicePort sp : state.servicePorts().values()) {
            ServicePortRules.Outcome o = ports.write(sp, state.endpointsOf(sp.name()));
            if (o.noLocalInternal()) noLocalInternal++;
            if (o.noLocalExternal()) noLocalExternal++;
        }
        for (var ip : node.nodePortIPs(state.family())) {
            if (t.hasSet(TableSkeleton.NODEPORT_IPS)) {
                t.element(new io.nftproxy.nft.Element(TableSkeleton.NODEPORT_IPS, List.of(new io.nftproxy.nft.Value.Addr(ip)), null, null));
            }
        }
        return new Table(t.build(), noLocalInternal, noLocalExternal);
    }
}
