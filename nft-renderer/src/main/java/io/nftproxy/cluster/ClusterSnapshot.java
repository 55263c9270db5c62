package io.nftproxy.cluster;

import java.util.List;

/** Everything the proxy knows about the cluster at one instant. Immutable; the sync loop renders from it. */
public record ClusterSnapshot(List<ServiceObject> services, List<EndpointSliceObject> endpointSlices,
                              List<NodeObject> nodes, List<ServiceCidrObject> serviceCidrs) {
    public ClusterSnapshot {
        services = ServiceObject.copy(services);
        endpointSlices = ServiceObject.copy(endpointSlices);
        nodes = ServiceObject.copy(nodes);
        serviceCidrs = ServiceObject.copy(serviceCidrs);
    }

    public NodeObject node(String name) {
        return nodes.stream().filter(n -> name != null && name.equals(n.meta().name())).findFirst().orElse(null);
    }
}
