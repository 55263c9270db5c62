package io.nftproxy.render;

import java.util.Locale;

/**
 * How a service's random endpoint pick is written. In {@link #UPSTREAM} and {@link #FAST} every object name
 * (chains, sets, maps, comments) and every other rule is the same; only the rules inside the {@code service-…} and
 * {@code local-…} chains differ. {@link #FLAT} also dispatches simple service ports through shared sets and maps
 * instead of per-service chains. docs/table-layout.md has the measurements behind each.
 */
public enum TableLayout {
    /**
     * kube-proxy 1.36's rule text: one rule per policy chain that picks through an anonymous
     * {@code numgen random mod N map { … }} (or {@code vmap} with ClientIP affinity). Every anonymous map is a set
     * of its own in the kernel, and loading N of them costs super-linear kernel time.
     */
    UPSTREAM,
    /**
     * A cascade of N rules per policy chain, {@code numgen random mod K 0} for K = N…2 and a last unconditional
     * rule, each DNATing (or, with affinity, going to an endpoint chain) directly. Each endpoint is still picked
     * with probability 1/N; the table holds no per-service set or map, so loading it costs linear kernel time.
     */
    FAST,
    /**
     * {@link #FAST} for every port that needs chains, and for <em>simple</em> ports (Cluster traffic policies, no
     * affinity, no source ranges, TCP or UDP, 1…{@value FlatDispatch#MAX_ENDPOINTS} endpoints) no chain at all:
     * their addresses and endpoints are elements of fixed per-protocol, per-endpoint-count sets and maps that a few
     * rules created with the table DNAT through. Adding or removing such a service or endpoint is then an element
     * update that never makes the kernel revalidate the table, so one change commits in about a millisecond at any
     * table size. kube-proxy's dispatch maps keep every port (simple ones with verdict {@code continue}), and a port
     * without endpoints is a {@code continue} element of {@code no-endpoint-services} rejected by a fixed rule.
     */
    FLAT;

    /** Whether service chains pick their endpoint through a cascade of {@code numgen random mod K 0} rules. */
    public boolean cascades() { return this != UPSTREAM; }

    /** Whether simple service ports are dispatched through the shared {@code flat-…} sets and maps. */
    public boolean flat() { return this == FLAT; }

    /**
     * The layout a proxy uses unless told otherwise: {@link #FLAT}. In the chain layouts every added rule or goto
     * element makes the kernel revalidate the whole table, so one change costs more the larger the table (fast:
     * 160-590 ms at 50k services x 10 endpoints); in FLAT the common changes are element updates that commit in
     * about a millisecond at any size, with kube-proxy's routing decisions and dispatch map names. FAST, not
     * UPSTREAM, is what the ports that need chains get, because upstream's anonymous maps make the kernel's load
     * time super-linear. See docs/table-layout.md and docs/benchmarks.md.
     */
    public static final TableLayout DEFAULT = FLAT;

    /** The command-line spelling: {@code upstream}, {@code fast} or {@code flat}. */
    public String cliName() { return name().toLowerCase(Locale.ROOT); }

    /** Parses the command-line spelling, case-insensitively. */
    public static TableLayout parse(String s) {
        for (TableLayout l : values()) if (l.cliName().equalsIgnoreCase(s.strip())) return l;
        throw new IllegalArgumentException("table layout '" + s + "' is not one of 'upstream', 'fast', 'flat'");
    }
}
