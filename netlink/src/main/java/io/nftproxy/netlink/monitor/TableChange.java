package io.nftproxy.netlink.monitor;

import io.nftproxy.net.IpFamily;

import java.util.EnumSet;
import java.util.Set;

/**
 * One committed nf_tables transaction that touched our table, or the news that the monitor lost track.
 *
 * @param origin     who made it: {@link Origin#OWN} (a thread or registered child of this process),
 *                   {@link Origin#FOREIGN}, {@link Origin#OVERFLOW} when the socket's queue overflowed, or
 *                   {@link Origin#UNKNOWN} when notifications were lost otherwise
 * @param families   which of {@code table ip kube-proxy} / {@code table ip6 kube-proxy} were touched; both when unknown
 * @param messages   the kinds of change seen ({@code DELTABLE}, {@code DELRULE}, ...); empty when unknown
 * @param messageCount how many notifications about our table the transaction carried
 * @param generation the ruleset generation the transaction produced ({@code NFTA_GEN_ID}), -1 when unknown
 * @param pid        the committing thread as the kernel reports it (initial PID namespace), 0 when unknown
 * @param process    that thread's {@code comm} ({@code nft}, a Java thread name, ...), empty when unknown
 * @param detail     why the origin is unknown; empty otherwise
 * @param receivedNanos {@link System#nanoTime()} when the transaction's last notification was read
 */
public record TableChange(Origin origin, Set<IpFamily> families, Set<NftMessage> messages, int messageCount,
                          long generation, int pid, String process, String detail, long receivedNanos) {
    /**
     * Who made the change. {@code OVERFLOW}: the kernel dropped notifications because the monitor's socket queue was
     * full ({@code ENOBUFS}), which a big commit of our own causes (every notification in the namespace is queued,
     * ours too), so it says nothing about anyone else; {@code UNKNOWN}: lost for another reason (a truncated or
     * undecodable datagram, a listener that fell behind).
     */
    public enum Origin { OWN, FOREIGN, OVERFLOW, UNKNOWN }

    public TableChange {
        families = Set.copyOf(families);
        messages = Set.copyOf(messages);
    }

    /** Whether the table can no longer be trusted to be what we committed: anything but our own change. */
    public boolean requiresResync() { return origin != Origin.OWN; }

    /** Notifications were lost (listener behind, truncated datagram): assume anything changed. */
    static TableChange unknown(String detail, long receivedNanos) {
        return lost(Origin.UNKNOWN, detail, receivedNanos);
    }

    /** The socket's queue overflowed and the kernel dropped notifications: assume anything changed. */
    static TableChange overflow(String detail, long receivedNanos) {
        return lost(Origin.OVERFLOW, detail, receivedNanos);
    }

    private static TableChange lost(Origin origin, String detail, long receivedNanos) {
        return new TableChange(origin, EnumSet.allOf(IpFamily.class), Set.of(), 0, -1, 0, "", detail, receivedNanos);
    }

    @Override public String toString() {
        if (origin == Origin.UNKNOWN) return "unknown change to kube-proxy tables: " + detail;
        if (origin == Origin.OVERFLOW) return "monitor overflowed, changes to kube-proxy tables unknown: " + detail;
        return origin.name().toLowerCase(java.util.Locale.ROOT) + " change to kube-proxy " + families + " by pid " + pid
                + " (" + process + "), generation " + generation + ", " + messageCount + " notifications " + messages;
    }
}
