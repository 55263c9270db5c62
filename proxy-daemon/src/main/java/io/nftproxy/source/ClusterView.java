package io.nftproxy.source;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.service.ProxyStateBuilder;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The cluster as a sync reads it: objects grouped by the Service they belong to
 * ({@link ProxyStateBuilder#serviceKey}), so that one Service's objects cost what they are, not what the cluster is.
 */
public interface ClusterView {
    /** Every Service key that has a Service object or an EndpointSlice. */
    Set<String> serviceKeys();

    /** The Service objects of a key: none, one, or (from a manifest directory) duplicates. */
    List<ServiceObject> services(String key);

    /** The EndpointSlices whose namespace and {@code kubernetes.io/service-name} label make this key. */
    List<EndpointSliceObject> endpointSlices(String key);

    List<ServiceCidrObject> serviceCidrs();

    /** A snapshot grouped once, O(size of the snapshot). */
    static ClusterView of(ClusterSnapshot s) {
        Map<String, List<ServiceObject>> services = new HashMap<>();
        Map<String, List<EndpointSliceObject>> slices = new HashMap<>();
        for (ServiceObject svc : s.services()) services.computeIfAbsent(ProxyStateBuilder.serviceKey(svc), k -> new ArrayList<>()).add(svc);
        for (EndpointSliceObject sl : s.endpointSlices()) slices.computeIfAbsent(ProxyStateBuilder.serviceKey(sl), k -> new ArrayList<>()).add(sl);
        java.util.Set<String> keys = new java.util.HashSet<>(services.keySet());
        keys.addAll(slices.keySet());
        Set<String> all = Set.copyOf(keys);
        List<ServiceCidrObject> cidrs = List.copyOf(s.serviceCidrs());
        return new ClusterView() {
            @Override public Set<String> serviceKeys() { return all; }
            @Override public List<ServiceObject> services(String key) { return services.getOrDefault(key, List.of()); }
            @Override public List<EndpointSliceObject> endpointSlices(String key) { return slices.getOrDefault(key, List.of()); }
            @Override public List<ServiceCidrObject> serviceCidrs() { return cidrs; }
        };
    }
}
