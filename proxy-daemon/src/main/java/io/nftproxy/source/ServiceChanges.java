package io.nftproxy.source;

import java.util.Set;

/**
 * What changed in the cluster since the last sync: the Services (by {@code namespace/name}) whose Service object or
 * EndpointSlices changed, or everything (first sync, ServiceCIDRs, Nodes).
 */
public record ServiceChanges(boolean all, Set<String> services) {
    public static final ServiceChanges ALL = new ServiceChanges(true, Set.of());
    public static final ServiceChanges NONE = new ServiceChanges(false, Set.of());

    public ServiceChanges {
        services = all ? Set.of() : Set.copyOf(services);
    }

    public static ServiceChanges of(Set<String> services) { return new ServiceChanges(false, services); }
}
