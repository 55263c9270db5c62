package io.nftproxy.netlink.monitor;

import io.nftproxy.netlink.rt.NetlinkDump;

import static io.nftproxy.netlink.rt.NetlinkDump.NLMSG_HDRLEN;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Decodes the nf_tables notifications in one netlink datagram: {@code nlmsghdr}, {@code nfgenmsg}, then
 * attributes. Only what tamper detection needs is read: the table an object message is about and the
 * generation, PID and process name of {@code NEWGEN}. Pure; messages of other subsystems are skipped.
 */
final class NotificationDecoder {
    /** {@code NFTA_TABLE_NAME}, {@code NFTA_CHAIN_TABLE}, {@code NFTA_RULE_TABLE}, {@code NFTA_SET_TABLE}, ...: all 1. */
    static final int NFTA_OBJECT_TABLE = 1;
    static final int NFTA_GEN_ID = 1;
    static final int NFTA_GEN_PROC_PID = 2;
    static final int NFTA_GEN_PROC_NAME = 3;

    private NotificationDecoder() {}

    /**
     * Appends the notifications in {@code buf} (position 0 to limit, native byte order) to {@code out}.
     *
     * @throws IllegalArgumentException if a length field points outside the datagram
     */
    static void decode(ByteBuffer buf, List<Notification> out) {
        int pos = 0;
        int end = buf.limit();
        while (pos + NLMSG_HDRLEN <= end) {
            int len = buf.getInt(pos);
            if (len < NLMSG_HDRLEN || pos + len > end) {
                throw new IllegalArgumentException("malformed netlink message at offset " + pos + ", length " + len);
            }
            NftMessage m = NftMessage.ofWireType(buf.getShort(pos + 4) & 0xffff);
            if (m != null && len >= NLMSG_HDRLEN + NetlinkDump.NFGENMSG_LEN) {
                out.add(notification(buf, m, pos + NLMSG_HDRLEN, pos + len));
            }
            pos += NetlinkDump.align(len);
        }
    }

    private static Notification notification(ByteBuffer buf, NftMessage m, int at, int end) {
        String[] table = {null};
        long[] generation = {-1};
        int[] pid = {0};
        String[] name = {""};
        NetlinkDump.attributes(buf, at + NetlinkDump.NFGENMSG_LEN, end, (type, start, stop) -> {
            if (m == NftMessage.NEWGEN) {
                // NLA_U32 attributes of nf_tables are big-endian (nla_put_be32)
                if (type == NFTA_GEN_ID && stop - start == 4) generation[0] = Integer.toUnsignedLong(NetlinkDump.be32(buf, start));
                else if (type == NFTA_GEN_PROC_PID && stop - start == 4) pid[0] = NetlinkDump.be32(buf, start);
                else if (type == NFTA_GEN_PROC_NAME) name[0] = string(buf, start, stop - start);
            } else if (type == NFTA_OBJECT_TABLE) {
                table[0] = string(buf, start, stop - start);
            }
        });
        return m == NftMessage.NEWGEN ? Notification.generation(generation[0], pid[0], name[0])
                : Notification.object(m, buf.get(at) & 0xff, table[0]);
    }

    /** A NUL-terminated netlink string. */
    private static String string(ByteBuffer buf, int at, int len) {
        int n = 0;
        while (n < len && buf.get(at + n) != 0) n++;
        byte[] b = new byte[n];
        buf.get(at, b);
        return new String(b, StandardCharsets.UTF_8);
    }
}
