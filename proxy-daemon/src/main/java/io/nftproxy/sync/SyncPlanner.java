package io.nftproxy.sync;

import io.nftproxy.source.ServiceChanges;

import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The one place that decides how much a sync does ({@link SyncLevel}), and why. Every input to that decision lives
 * here, and nowhere else: the store only says what changed ({@link ServiceChanges}).
 * <ul>
 *   <li>{@link SyncLevel#CONVERGE}: read a family's table back from the kernel and converge on it
 *       ({@link KernelTable#converge}): the first sync, the sync after a failed one (a failed commit leaves what the
 *       model thinks the kernel holds in doubt), when someone asked for it (the monitor saw another writer), and
 *       every {@code convergeInterval} unless the {@link Verifier} proves the table unchanged since our last
 *       commit;</li>
 *   <li>{@link SyncLevel#REBUILD}: validate every Service afresh and commit the model's diff. Needed when the Node,
 *       the node's context or the ServiceCIDRs changed, or the whole cluster was handed over again; the model then
 *       also renders every port afresh ({@link Plan#rerender}) unless only the Node object changed;</li>
 *   <li>otherwise {@link SyncLevel#PARTIAL}: only the Services that changed, committed as the model's diff.</li>
 * </ul>
 * Not thread-safe except {@link #requestConverge}, which any thread may call.
 */
public final class SyncPlanner {
    public enum Reason {
        FIRST_SYNC("first sync"), AFTER_FAILURE("the last sync failed"), REQUESTED("another writer changed the table"),
        TIMER("the periodic verification is due"), NODE("the Node object changed"),
        NODE_CONTEXT("the node's addresses or settings changed"), SERVICE_CIDRS("the ServiceCIDRs changed"),
        WHOLE_CLUSTER("the whole cluster was handed over");

        private final String text;

        Reason(String text) { this.text = text; }

        @Override public String toString() { return text; }
    }

    /** Proves a family's kernel table unchanged since our last commit without listing it, or says why not. */
    @FunctionalInterface
    public interface Verifier {
        GenerationTracker.Verification verify(IpFamily family);
    }

    /**
     * What one sync does.
     *
     * @param level    the most any family does
     * @param converge the families whose kernel table is read back and converged on
     * @param reasons  why it is more than partial; empty for a partial sync
     * @param verifications the periodic verifications made for this sync, by family: one that proved the table
     *                 unchanged replaces the read-back, one that did not leaves the family in {@code converge}
     */
    public record Plan(SyncLevel level, Set<IpFamily> converge, Set<Reason> reasons,
                       Map<IpFamily, GenerationTracker.Verification> verifications) {
        public Plan {
            converge = converge.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(converge));
            reasons = reasons.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(reasons));
            verifications = verifications.isEmpty() ? Map.of() : Collections.unmodifiableMap(new EnumMap<>(verifications));
            if (converge.isEmpty() == (level == SyncLevel.CONVERGE)) {
                throw new IllegalArgumentException("level " + level + " with converging families " + converge);
            }
            if (reasons.isEmpty() != (level == SyncLevel.PARTIAL)) {
                throw new IllegalArgumentException("level " + level + " with reasons " + reasons);
            }
            for (var v : verifications.values()) {
                if (v.unchanged() == converge.contains(v.family())) {
                    throw new IllegalArgumentException(v.family() + ": converge exactly when its verification failed");
                }
            }
        }

        public boolean convergesOn(IpFamily f) { return converge.contains(f); }

        /** What family {@code f}'s table does: converge, or the rebuild or partial sync of the whole plan. */
        public SyncLevel level(IpFamily f) {
            return converge.contains(f) ? SyncLevel.CONVERGE : level == SyncLevel.CONVERGE ? SyncLevel.REBUILD : level;
        }

        /**
         * The models render every port afresh instead of comparing each port's inputs: what every port renders to
         * may have moved (the node's context, the ServiceCIDRs, or a cluster handed over whole).
         */
        public boolean rerender() {
            return reasons.contains(Reason.NODE_CONTEXT) || reasons.contains(Reason.SERVICE_CIDRS) || reasons.contains(Reason.WHOLE_CLUSTER);
        }

        /** Whether the periodic verification proved {@code f}'s table unchanged, so that it is not read back. */
        public boolean verified(IpFamily f) {
            GenerationTracker.Verification v = verifications.get(f);
            return v != null && v.unchanged();
        }
    }

    private final Duration convergeInterval;
    private final Verifier verifier;
    private final Map<IpFamily, Instant> lastConverged = new EnumMap<>(IpFamily.class);
    private final Set<IpFamily> failed = EnumSet.noneOf(IpFamily.class);
    private final AtomicBoolean requested = new AtomicBoolean();
    private NodeContext lastNode;

    /**
     * @param convergeInterval each table is converged on (or proved unchanged) at least this often
     * @param verifier         proves a table unchanged on the timer without a listing; null: always converge
     */
    public SyncPlanner(Duration convergeInterval, Verifier verifier) {
        this.verifier = verifier;
        if (convergeInterval.isNegative() || convergeInterval.isZero()) throw new IllegalArgumentException("converge interval must be positive, got " + convergeInterval);
        this.convergeInterval = convergeInterval;
    }

    /** The next sync converges both tables; for a change someone else made. Thread-safe. */
    public void requestConverge() { requested.set(true); }

    /** The plan for a sync at {@code now}; takes a pending {@link #requestConverge} with it. */
    public Plan plan(ServiceChanges changes, NodeContext node, Instant now) {
        Set<Reason> reasons = EnumSet.noneOf(Reason.class);
        Set<IpFamily> converge = EnumSet.noneOf(IpFamily.class);
        Map<IpFamily, GenerationTracker.Verification> verified = new EnumMap<>(IpFamily.class);
        boolean asked = requested.getAndSet(false);
        for (IpFamily f : IpFamily.values()) {
            Instant last = lastConverged.get(f);
            Reason r = last == null ? Reason.FIRST_SYNC : failed.contains(f) ? Reason.AFTER_FAILURE : asked ? Reason.REQUESTED
                    : !now.isBefore(last.plus(convergeInterval)) ? Reason.TIMER : null;
            if (r == Reason.TIMER && verifier != null) {
                GenerationTracker.Verification v = verifier.verify(f);
                verified.put(f, v);
                if (v.unchanged()) {
                    reasons.add(r);
                    continue;
                }
            }
            if (r != null) {
                reasons.add(r);
                converge.add(f);
            }
        }
        // Before the first sync is recorded everything is new anyway: the first sync's reason says so.
        if (lastNode != null) {
            if (!lastNode.equals(node)) reasons.add(Reason.NODE_CONTEXT);
            for (ServiceChanges.Wide w : changes.wide()) reasons.add(reason(w));
        }
        SyncLevel level = !converge.isEmpty() ? SyncLevel.CONVERGE : reasons.isEmpty() ? SyncLevel.PARTIAL : SyncLevel.REBUILD;
        return new Plan(level, converge, reasons, verified);
    }

    private static Reason reason(ServiceChanges.Wide w) {
        return switch (w) {
            case NODE -> Reason.NODE;
            case SERVICE_CIDRS -> Reason.SERVICE_CIDRS;
            case WHOLE_CLUSTER -> Reason.WHOLE_CLUSTER;
        };
    }

    /** What the sync of {@code plan} did; a family that failed is converged next time. */
    public void done(Plan plan, Map<IpFamily, SyncResult> results, NodeContext node, Instant now) {
        for (Map.Entry<IpFamily, SyncResult> e : results.entrySet()) {
            IpFamily f = e.getKey();
            if (!e.getValue().success()) {
                failed.add(f);
                continue;
            }
            failed.remove(f);
            if (plan.convergesOn(f) || plan.verified(f)) lastConverged.put(f, now);
        }
        lastNode = Objects.requireNonNull(node);
    }

    /** A sync stopped halfway (a bug, not a kernel failure): nothing it half-did can be trusted. */
    public void abandoned() {
        failed.addAll(EnumSet.allOf(IpFamily.class));
    }
}
