package io.nftproxy.source;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * What changed in the cluster since the last sync: the Services (by {@code namespace/name}) whose Service object or
 * EndpointSlices changed, and the changes that concern every Service ({@link Wide}). It says why, never how much to
 * sync: that is the planner's decision.
 */
public record ServiceChanges(Set<Wide> wide, Set<String> services) {
    /** A change that concerns every Service. */
    public enum Wide {
        /** This node's Node object changed (or appeared, or went). */
        NODE,
        /** A ServiceCIDR changed. */
        SERVICE_CIDRS,
        /** The whole cluster was handed over at once: the store's first drain, or a snapshot. */
        WHOLE_CLUSTER
    }

    public static final ServiceChanges WHOLE_CLUSTER = new ServiceChanges(Set.of(Wide.WHOLE_CLUSTER), Set.of());
    public static final ServiceChanges NONE = new ServiceChanges(Set.of(), Set.of());

    public ServiceChanges {
        wide = wide.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(wide));
        services = Set.copyOf(services);
    }

    public static ServiceChanges of(Set<String> services) { return new ServiceChanges(Set.of(), services); }
}
