package io.nftproxy.sync;

import java.util.Locale;

/**
 * How much one sync covers: the one word for each degree, used by the planner's plan, the per-family results, the
 * log and the metrics. Ordered from least to most.
 */
public enum SyncLevel {
    /** Only the Services that changed are validated and rendered; the model's diff is committed. */
    PARTIAL,
    /** Every Service is validated afresh and the model's diff committed; the kernel is not read. */
    REBUILD,
    /** Every Service is validated afresh, and the kernel's table read back and converged on. */
    CONVERGE;

    /** Every Service is looked at: kube-proxy calls such a sync "full" (its full-sync duration histogram). */
    public boolean wholeCluster() { return this != PARTIAL; }

    public SyncLevel atLeast(SyncLevel other) { return compareTo(other) >= 0 ? this : other; }

    /** The level's word in logs and metric labels. */
    public String label() { return name().toLowerCase(Locale.ROOT); }

    @Override public String toString() { return label(); }
}
