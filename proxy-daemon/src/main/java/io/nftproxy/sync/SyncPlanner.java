package io.nftproxy.sync;

import io.nftproxy.source.ServiceChanges;

import io.nftproxy.net.IpFamily;
import io.nftproxy.proxy.NodeContext;

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
 * The one place that decides how much a sync does. Every input to that decision lives here, and nowhere else:
 * <ul>
 *   <li><b>read back</b> a family's table from the kernel and converge on it ({@link KernelTable#converge}): the
 *       first sync, the sync after a failed one (a failed commit leaves what the model thinks the kernel holds in
 *       doubt), when someone asked for it (the monitor saw another writer), and every {@code readBackInterval}
 *       unless the {@link Verifier} proves the table unchanged since our last commit;</li>
 *   <li><b>everything</b>: validate and render every Service afresh. Implied by a read-back, and needed when the
 *       node's context changed or the source listed the whole cluster again;</li>
 *   <li>otherwise <b>partial</b>: only the Services that changed, committed as the model's diff.</li>
 * </ul>
 * Not thread-safe except {@link #requestReadBack}, which any thread may call.
 */
public final class SyncPlanner {
    public enum Reason {
        FIRST_SYNC("first sync"), AFTER_FAILURE("the last sync failed"), REQUESTED("another writer changed the table"),
        TIMER("the periodic read-back is due"), NODE_CHANGED("the node's addresses or settings changed"),
        CLUSTER_RELISTED("the cluster was listed again");

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
     * @param everything every Service is validated and rendered afresh (else only the changed ones)
     * @param readBack   the families whose kernel table is read back and converged on
     * @param reasons    why it is more than partial; empty for a partial sync
     * @param verifications the periodic verifications made for this sync, by family: one that proved the table
     *                   unchanged replaces the read-back, one that did not leaves the family in {@code readBack}
     */
    public record Plan(boolean everything, Set<IpFamily> readBack, Set<Reason> reasons,
                       Map<IpFamily, GenerationTracker.Verification> verifications) {
        public Plan {
            readBack = readBack.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(readBack));
            reasons = reasons.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(reasons));
            verifications = verifications.isEmpty() ? Map.of() : Collections.unmodifiableMap(new EnumMap<>(verifications));
            if (!readBack.isEmpty() && !everything) throw new IllegalArgumentException("a read-back renders everything");
            for (var v : verifications.values()) {
                if (v.unchanged() == readBack.contains(v.family())) {
                    throw new IllegalArgumentException(v.family() + ": read back exactly when its verification failed");
                }
            }
        }

        public boolean readBack(IpFamily f) { return readBack.contains(f); }

        /** Whether the periodic verification proved {@code f}'s table unchanged, so that it is not read back. */
        public boolean verified(IpFamily f) {
            GenerationTracker.Verification v = verifications.get(f);
            return v != null && v.unchanged();
        }
    }

    private final Duration readBackInterval;
    private final Verifier verifier;
    private final Map<IpFamily, Instant> lastReadBack = new EnumMap<>(IpFamily.class);
    private final Set<IpFamily> failed = EnumSet.noneOf(IpFamily.class);
    private final AtomicBoolean requested = new AtomicBoolean();
    private NodeContext lastNode;

    /** @param verifier proves a table unchanged on the timer without a listing; null: always read back */
    public SyncPlanner(Duration readBackInterval, Verifier verifier) {
        this.verifier = verifier;
        if (readBackInterval.isNegative() || readBackInterval.isZero()) throw new IllegalArgumentException("read-back interval must be positive, got " + readBackInterval);
        this.readBackInterval = readBackInterval;
    }

    /** The next sync reads both tables back; for a change someone else made. Thread-safe. */
    public void requestReadBack() { requested.set(true); }

    /** The plan for a sync at {@code now}; takes a pending {@link #requestReadBack} with it. */
    public Plan plan(ServiceChanges changes, NodeContext node, Instant now) {
        Set<Reason> reasons = EnumSet.noneOf(Reason.class);
        Set<IpFamily> readBack = EnumSet.noneOf(IpFamily.class);
        Map<IpFamily, GenerationTracker.Verification> verified = new EnumMap<>(IpFamily.class);
        boolean asked = requested.getAndSet(false);
        for (IpFamily f : IpFamily.values()) {
            Instant last = lastReadBack.get(f);
            Reason r = last == null ? Reason.FIRST_SYNC : failed.contains(f) ? Reason.AFTER_FAILURE : asked ? Reason.REQUESTED
                    : !now.isBefore(last.plus(readBackInterval)) ? Reason.TIMER : null;
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
                readBack.add(f);
            }
        }
        if (lastNode != null && !lastNode.equals(node)) reasons.add(Reason.NODE_CHANGED);
        if (changes.all() && lastNode != null) reasons.add(Reason.CLUSTER_RELISTED);
        return new Plan(!reasons.isEmpty(), readBack, reasons, verified);
    }

    /** What the sync of {@code plan} did; a family that failed is read back next time. */
    public void done(Plan plan, Map<IpFamily, SyncResult> results, NodeContext node, Instant now) {
        for (Map.Entry<IpFamily, SyncResult> e : results.entrySet()) {
            IpFamily f = e.getKey();
            if (!e.getValue().success()) {
                failed.add(f);
                continue;
            }
            failed.remove(f);
            if (plan.readBack(f) || plan.verified(f)) lastReadBack.put(f, now);
        }
        lastNode = Objects.requireNonNull(node);
    }

    /** A sync stopped halfway (a bug, not a kernel failure): nothing it half-did can be trusted. */
    public void abandoned() {
        failed.addAll(EnumSet.allOf(IpFamily.class));
    }
}
