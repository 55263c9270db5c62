package io.nftproxy.service;

import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The validated, per-family view the renderer works from: every service port of this family, its endpoints in
 * upstream order (sorted by {@code ip:port}), the family's ServiceCIDRs, and the diagnostics of what was skipped.
 * Also one Service's part of it ({@link ProxyStateBuilder#buildService}, without ServiceCIDRs), so that a sync can
 * rebuild only the Services that changed; health checks and conntrack cleanup read either.
 *
 * @param endpoints by service port, as the slices name them: may hold ports no Service has
 */
public record ProxyState(IpFamily family, SortedMap<ServicePortName, ServicePort> servicePorts,
                         Map<ServicePortName, List<Endpoint>> endpoints, List<IpPrefix> serviceCidrs,
                         List<Diagnostic> diagnostics) {
    public ProxyState {
        servicePorts = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(servicePorts));
        endpoints = Map.copyOf(endpoints);
        serviceCidrs = List.copyOf(serviceCidrs);
        diagnostics = List.copyOf(diagnostics);
    }

    public List<Endpoint> endpointsOf(ServicePortName name) { return endpoints.getOrDefault(name, List.of()); }
}
