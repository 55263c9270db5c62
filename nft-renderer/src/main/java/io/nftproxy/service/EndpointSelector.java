package io.nftproxy.service;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Chooses which endpoints a service port uses, as upstream's CategorizeEndpoints does: ready endpoints (narrowed
 * by topology hints when every ready endpoint carries one and one names us), else serving-terminating ones; the
 * Local policy ignores topology and uses this node's endpoints only.
 */
public final class EndpointSelector {
    private EndpointSelector() {}

    /** The selection for one service port. {@code hasAnyEndpoints}: a usable endpoint exists anywhere. */
    public record Selection(List<Endpoint> cluster, List<Endpoint> local, List<Endpoint> allReachable,
                            boolean hasAnyEndpoints) {}

    public static Selection select(ServicePort svc, List<Endpoint> endpoints, NodeContext node) {
        List<Endpoint> cluster = List.of();
        boolean hasAny = false;
        if (svc.usesClusterEndpoints()) {
            String mode = topologyMode(endpoints, node);
            cluster = endpoints.stream().filter(e -> e.ready() && availableFor(e, mode, node)).toList();
            if (cluster.isEmpty()) cluster = endpoints.stream().filter(Endpoint::servingTerminating).toList();
            hasAny = !cluster.isEmpty();
        }
        if (!svc.usesLocalEndpoints()) return new Selection(cluster, List.of(), cluster, hasAny);

        hasAny |= endpoints.stream().anyMatch(e -> e.ready() || e.servingTerminating());
        List<Endpoint> local = endpoints.stream().filter(e -> e.local() && e.ready()).toList();
        if (local.isEmpty()) local = endpoints.stream().filter(e -> e.local() && e.servingTerminating()).toList();
        if (!svc.usesClusterEndpoints()) return new Selection(cluster, local, local, hasAny);

        Map<String, Endpoint> union = new LinkedHashMap<>();
        for (Endpoint e : cluster) union.put(e.hostPort(), e);
        for (Endpoint e : local) union.put(e.hostPort(), e);
        return new Selection(cluster, local, Endpoint.sortedByHostPort(union.values()), hasAny);
    }

    /** "PreferSameNode", "PreferSameZone" or "" from the hints on the ready endpoints. */
    static String topologyMode(List<Endpoint> endpoints, NodeContext node) {
        boolean allNodeHints = true, forNode = false, allZoneHints = true, forZone = false;
        for (Endpoint e : endpoints) {
            if (!e.ready()) continue;
            if (e.nodeHints().isEmpty()) allNodeHints = false;
            else if (e.nodeHints().contains(node.nodeName())) forNode = true;
            if (e.zoneHints().isEmpty()) allZoneHints = false;
            else if (node.zone() != null && e.zoneHints().contains(node.zone())) forZone = true;
        }
        if (node.preferSameNodeEnabled() && allNodeHints && forNode) return "PreferSameNode";
        if (allZoneHints && forZone) return "PreferSameZone";
        return "";
    }

    private static boolean availableFor(Endpoint e, String mode, NodeContext node) {
        return switch (mode) {
            case "PreferSameNode" -> e.nodeHints().contains(node.nodeName());
            case "PreferSameZone" -> e.zoneHints().contains(node.zone());
            default -> true;
        };
    }
}
