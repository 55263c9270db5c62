package io.nftproxy.netlink.monitor;

import io.nftproxy.net.IpFamily;

import java.util.EnumMap;
import java.util.Map;
import java.util.Set;

/**
 * What the monitor has seen of the namespace's commits, by generation: enough to prove that every commit between
 * two generations left {@code table ip kube-proxy} (or {@code ip6}) alone, so that someone else's commit to their own
 * table (a CNI plugin, a firewall) does not cost a read-back of ours.
 *
 * <p>The kernel numbers commits one by one and sends each commit's notifications, then its {@code NEWGEN}, under the
 * commit mutex. Once one {@code NEWGEN} has been seen, every later commit is seen whole, unless notifications are
 * lost, which the monitor reports ({@link #lost()}). The first commit seen after the start or after a loss may have
 * been seen in part only; so may one after a gap in the numbering. Both therefore start the run anew: only commits
 * numbered after its start are vouched for. Written by the monitor's reader thread, read by the sync thread.
 */
public final class CommitLedger {
    /** Commits numbered after this one were all seen whole, up to {@link #lastSeen}; -1 when there is no such run. */
    private long runStart = -1;
    private long lastSeen = -1;
    /** Per family, the last commit (ours or anyone's) that touched our table, or that may have. */
    private final Map<IpFamily, Long> lastTouched = new EnumMap<>(IpFamily.class);

    /** One commit seen to its {@code NEWGEN}, and the families of our table its notifications touched. */
    public synchronized void committed(long generation, Set<IpFamily> touched) {
        if (generation < 0) {
            lost();
            return;
        }
        if (runStart < 0 || generation != next(lastSeen)) {
            runStart = generation;
        } else if (generation < lastSeen) {
            // The 32-bit counter wrapped (and skipped 0), seen whole: the run goes on from 1, and what touched our
            // table before the wrap concerns no interval that can still be asked about (those never span a wrap).
            runStart = 0;
            lastTouched.clear();
        }
        lastSeen = generation;
        for (IpFamily f : touched) lastTouched.put(f, generation);
    }

    /** Notifications were lost: nothing is vouched for until the next whole commit. */
    public synchronized void lost() {
        runStart = -1;
        lastSeen = -1;
    }

    /**
     * Whether every commit after {@code from} up to and including {@code to} was seen and none touched
     * {@code family}'s table. False whenever that cannot be proven: the monitor has not read up to {@code to} yet,
     * lost notifications since {@code from}, or the counter wrapped in between.
     */
    public synchronized boolean untouchedBetween(IpFamily family, long from, long to) {
        if (runStart < 0 || from < runStart || to < from || lastSeen != to) return false;
        Long touched = lastTouched.get(family);
        return touched == null || touched <= from;
    }

    @Override public synchronized String toString() {
        return runStart < 0 ? "no whole commit seen yet" : "commits " + next(runStart) + ".." + lastSeen + " seen whole";
    }

    /** The generation after {@code g}: the kernel skips 0 when its 32-bit counter wraps. */
    public static long next(long g) {
        long n = (g + 1) & 0xffff_ffffL;
        return n == 0 ? 1 : n;
    }
}
