package io.nftproxy.random;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ServiceObject;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One generated cluster: the seed it came from, its Services and EndpointSlices (every object one the API server
 * accepts), and the node it is rendered for. {@link #snapshot()} adds the Node object and the ServiceCIDRs, as a
 * proxy listing the API server would see them.
 */
public record RandomCluster(long seed, List<ServiceObject> services, List<EndpointSliceObject> slices, NodeSettings node) {
    public RandomCluster {
        services = List.copyOf(services);
        slices = List.copyOf(slices);
    }

    /** The cluster as a proxy on {@link #node()} lists it. */
    public ClusterSnapshot snapshot() {
        return new ClusterSnapshot(services, slices, List.of(node.nodeObject()), List.of(ClusterGenerator.serviceCidr(node)));
    }

    public RandomCluster withServices(List<ServiceObject> s) { return new RandomCluster(seed, s, slices, node); }

    public RandomCluster withSlices(List<EndpointSliceObject> s) { return new RandomCluster(seed, services, s, node); }

    public RandomCluster withNode(NodeSettings n) { return new RandomCluster(seed, services, slices, n); }

    /** Without Service {@code s} and the slices that belong to it. */
    public RandomCluster withoutService(ServiceObject s) {
        List<ServiceObject> rest = new ArrayList<>(services);
        rest.remove(s);
        return new RandomCluster(seed, rest, slices.stream().filter(sl -> !belongsTo(sl, s)).toList(), node);
    }

    /**
     * The same cluster with every endpoint that a Service's slices list more than once (same address) listed the
     * same way each time: as the first of its slices by name has it. kube-proxy picks one copy of such an endpoint
     * by iterating a Go map of the Service's slices, so when the copies differ (ready in one, not in the other) its
     * choice changes from one sync to the next; nftproxy's is fixed (docs/compatibility.md). Only the clusters a
     * differential against kube-proxy uses need this.
     */
    public RandomCluster withConsistentDuplicateEndpoints() {
        Map<String, EndpointSliceObject.Endpoint> firstCopy = new HashMap<>();
        List<EndpointSliceObject> sorted = new ArrayList<>(slices);
        sorted.sort(Comparator.comparing((EndpointSliceObject sl) -> sl.meta().namespace()).thenComparing(sl -> sl.meta().name()));
        for (EndpointSliceObject sl : sorted) {
            for (EndpointSliceObject.Endpoint e : sl.endpoints()) {
                if (!e.addresses().isEmpty()) firstCopy.putIfAbsent(endpointKey(sl, e), e);
            }
        }
        List<EndpointSliceObject> out = slices.stream().map(sl -> new EndpointSliceObject(sl.meta(), sl.addressType(), sl.ports(),
                sl.endpoints().stream().map(e -> e.addresses().isEmpty() ? e : firstCopy.get(endpointKey(sl, e))).toList())).toList();
        return withSlices(out);
    }

    private static String endpointKey(EndpointSliceObject sl, EndpointSliceObject.Endpoint e) {
        return sl.meta().namespace() + "/" + sl.serviceName() + " " + e.addresses().get(0);
    }

    /** The slices of Service {@code s}, by namespace and the service-name label. */
    public List<EndpointSliceObject> slicesOf(ServiceObject s) {
        return slices.stream().filter(sl -> belongsTo(sl, s)).toList();
    }

    static boolean belongsTo(EndpointSliceObject sl, ServiceObject s) {
        return s.meta().namespace().equals(sl.meta().namespace()) && s.meta().name().equals(sl.serviceName());
    }

    /** {@code seed 42: 12 Services, 17 EndpointSlices, 31 endpoints, node …}. */
    public String summary() {
        return "seed " + seed + ": " + services.size() + " Services, " + slices.size() + " EndpointSlices, "
                + slices.stream().mapToInt(s -> s.endpoints().size()).sum() + " endpoints, node " + node.summary();
    }
}
