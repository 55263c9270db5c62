package io.nftproxy.netlink.monitor;

import io.nftproxy.net.IpFamily;

import java.util.EnumSet;
import java.util.Set;
import java.util.function.IntPredicate;

/**
 * Groups notifications into transactions and judges each one. The kernel sends a committed batch's object
 * notifications and then one {@code NEWGEN} that names the committing thread, all under the commit mutex, so
 * batches never interleave: everything since the previous {@code NEWGEN} belongs to this one. Pure and
 * single-threaded (the monitor's reader thread owns it).
 */
final class TransactionAssembler {
    private final String table;
    private final IntPredicate ownPid;
    private final boolean reportOwn;
    private final CommitLedger ledger;

    private final Set<IpFamily> families = EnumSet.noneOf(IpFamily.class);
    private final Set<NftMessage> messages = EnumSet.noneOf(NftMessage.class);
    private int count;

    /**
     * @param table     the table to watch in families ip and ip6 ({@code kube-proxy})
     * @param ownPid    true for the PIDs whose commits are ours
     * @param reportOwn whether our own transactions are reported too (as {@link TableChange.Origin#OWN})
     * @param ledger    told of every commit, whoever made it and whatever it touched
     */
    TransactionAssembler(String table, IntPredicate ownPid, boolean reportOwn, CommitLedger ledger) {
        this.table = table;
        this.ownPid = ownPid;
        this.reportOwn = reportOwn;
        this.ledger = ledger;
    }

    /** Takes one notification; returns the verdict when it closed a transaction that touched the table, else null. */
    TableChange accept(Notification n, long nowNanos) {
        if (n.message() != NftMessage.NEWGEN) {
            IpFamily f = family(n.nfprotoFamily());
            if (f != null && table.equals(n.table())) {
                families.add(f);
                messages.add(n.message());
                count++;
            }
            return null;
        }
        try {
            ledger.committed(n.generation(), families);
            if (count == 0) return null;
            boolean own = n.pid() != 0 && ownPid.test(n.pid());
            if (own && !reportOwn) return null;
            return new TableChange(own ? TableChange.Origin.OWN : TableChange.Origin.FOREIGN, families, messages, count,
                    n.generation(), n.pid(), n.processName(), "", nowNanos);
        } finally {
            reset();
        }
    }

    /**
     * Forgets a half-seen transaction after notifications were lost; the caller reports an unknown change
     * instead, which covers it.
     */
    void lost() {
        reset();
        ledger.lost();
    }

    private void reset() {
        families.clear();
        messages.clear();
        count = 0;
    }

    private static IpFamily family(int nfproto) {
        if (nfproto == Notification.NFPROTO_IPV4) return IpFamily.IPV4;
        if (nfproto == Notification.NFPROTO_IPV6) return IpFamily.IPV6;
        return null; // inet, arp, bridge, netdev: kube-proxy's tables are ip and ip6 only
    }
}
