package io.nftproxy.proxy;

import io.nftproxy.net.IpFamily;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One Service's part of a {@link ProxyState}: its validated ports in one family, the endpoints its EndpointSlices
 * give them, and the diagnostics of its Service object and slices. Built by
 * {@link ProxyStateBuilder#buildService} with the very validation of {@link ProxyStateBuilder#build}, so that a
 * sync can rebuild only the Services that changed.
 *
 * @param endpoints by service port, as the slices name them: may hold ports the Service does not have
 */
public record ServiceState(IpFamily family, SortedMap<ServicePortName, ServicePort> servicePorts,
                           Map<ServicePortName, List<Endpoint>> endpoints, List<Diagnostic> diagnostics)
        implements ServicePortView {
    public ServiceState {
        servicePorts = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(servicePorts));
        endpoints = Map.copyOf(endpoints);
        diagnostics = List.copyOf(diagnostics);
    }

    @Override public List<Endpoint> endpointsOf(ServicePortName name) { return endpoints.getOrDefault(name, List.of()); }
}
