package io.nftproxy.netlink.monitor;

/**
 * One decoded nf_tables notification. For object messages, {@code table} is the name of the table the object
 * lives in; for {@link NftMessage#NEWGEN}, the generation fields are set and {@code table} is null.
 *
 * @param nfprotoFamily the {@code nfgen_family} byte: {@code NFPROTO_IPV4} 2, {@code NFPROTO_IPV6} 10, inet 1, ...
 * @param generation    {@code NFTA_GEN_ID}, the ruleset generation this commit produced; -1 if absent
 * @param pid           {@code NFTA_GEN_PROC_PID}: the kernel's id of the <em>thread</em> that committed, as seen from
 *                      the initial PID namespace; 0 if absent
 * @param processName   {@code NFTA_GEN_PROC_NAME}, that thread's {@code comm}; empty if absent
 */
record Notification(NftMessage message, int nfprotoFamily, String table, long generation, int pid, String processName) {
    static final int NFPROTO_INET = 1;
    static final int NFPROTO_IPV4 = 2;
    static final int NFPROTO_IPV6 = 10;

    static Notification object(NftMessage message, int family, String table) {
        return new Notification(message, family, table, -1, 0, "");
    }

    static Notification generation(long generation, int pid, String processName) {
        return new Notification(NftMessage.NEWGEN, 0, null, generation, pid, processName);
    }
}
