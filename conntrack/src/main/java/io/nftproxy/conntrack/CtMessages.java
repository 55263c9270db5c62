package io.nftproxy.conntrack;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.rt.NetlinkDump;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * ctnetlink messages (linux/netfilter/nfnetlink_conntrack.h): the dump request, delete requests, and the parser of
 * {@code IPCTNL_MSG_CT_NEW} dump replies. Netlink headers and attribute headers are in host order; addresses,
 * ports, zone and id are big-endian, as the kernel stores them.
 */
final class CtMessages {
    static final int NLM_F_ACK = 0x4;

    static final int NFNL_SUBSYS_CTNETLINK = 1;
    static final int IPCTNL_MSG_CT_NEW = 0;
    static final int IPCTNL_MSG_CT_GET = 1;
    static final int IPCTNL_MSG_CT_DELETE = 2;

    static final int NLA_F_NESTED = 0x8000;
    static final int NLA_TYPE_MASK = 0x3fff;

    static final int CTA_TUPLE_ORIG = 1;
    static final int CTA_TUPLE_REPLY = 2;
    static final int CTA_STATUS = 3;
    static final int CTA_PROTOINFO = 4;
    static final int CTA_PROTOINFO_TCP = 1;
    static final int CTA_PROTOINFO_TCP_STATE = 1;
    static final int CTA_ID = 12;
    static final int CTA_ZONE = 18;
    static final int CTA_TUPLE_IP = 1;
    static final int CTA_TUPLE_PROTO = 2;
    static final int CTA_IP_V4_SRC = 1;
    static final int CTA_IP_V4_DST = 2;
    static final int CTA_IP_V6_SRC = 3;
    static final int CTA_IP_V6_DST = 4;
    static final int CTA_PROTO_NUM = 1;
    static final int CTA_PROTO_SRC_PORT = 2;
    static final int CTA_PROTO_DST_PORT = 3;

    static final int AF_INET = 2;
    static final int AF_INET6 = 10;

    /** Upper bound of one delete request: header, nfgenmsg, an IPv6 tuple, zone, id. */
    static final int MAX_DELETE_LEN = 160;

    private CtMessages() {}

    static int type(int msg) { return (NFNL_SUBSYS_CTNETLINK << 8) | msg; }

    /** {@code IPCTNL_MSG_CT_GET} with {@code NLM_F_DUMP}: every entry of the family (the kernel filters by L3). */
    static ByteBuffer dumpRequest(IpFamily family, int seq) {
        ByteBuffer b = NetlinkDump.request(NetlinkDump.NFGENMSG_LEN, type(IPCTNL_MSG_CT_GET),
                NetlinkDump.NLM_F_REQUEST | NetlinkDump.NLM_F_DUMP, seq);
        nfgen(b, family);
        return b.flip();
    }

    /**
     * Appends one {@code IPCTNL_MSG_CT_DELETE} for {@code flow}, asking for an ACK: the original tuple, the zone when
     * not 0, and the id when known, so only the entry we listed is deleted.
     */
    static void appendDelete(ByteBuffer b, FlowEntry flow, int seq) {
        int start = b.position();
        // The length is filled in at the end.
        NetlinkDump.header(b, 0, type(IPCTNL_MSG_CT_DELETE), NetlinkDump.NLM_F_REQUEST | NLM_F_ACK, seq);
        nfgen(b, flow.family());
        int tuple = beginNested(b, CTA_TUPLE_ORIG);
        int ip = beginNested(b, CTA_TUPLE_IP);
        boolean v4 = flow.family() == IpFamily.IPV4;
        bytesAttr(b, v4 ? CTA_IP_V4_SRC : CTA_IP_V6_SRC, flow.origSrc().bytes());
        bytesAttr(b, v4 ? CTA_IP_V4_DST : CTA_IP_V6_DST, flow.origDst().bytes());
        endNested(b, ip);
        int proto = beginNested(b, CTA_TUPLE_PROTO);
        intAttr(b, CTA_PROTO_NUM, flow.protocol(), 1);
        if (hasPorts(flow.protocol())) {
            intAttr(b, CTA_PROTO_SRC_PORT, flow.origSrcPort(), 2);
            intAttr(b, CTA_PROTO_DST_PORT, flow.origDstPort(), 2);
        }
        endNested(b, proto);
        endNested(b, tuple);
        if (flow.zone() != 0) intAttr(b, CTA_ZONE, flow.zone(), 2);
        if (flow.id() != 0) intAttr(b, CTA_ID, flow.id(), 4);
        b.putInt(start, b.position() - start);
    }

    private static boolean hasPorts(int protocol) {
        return protocol == FlowEntry.TCP || protocol == FlowEntry.UDP || protocol == FlowEntry.SCTP
                || protocol == 136 /* UDP-Lite */ || protocol == 33 /* DCCP */;
    }

    private static void nfgen(ByteBuffer b, IpFamily family) {
        b.put((byte) (family == IpFamily.IPV4 ? AF_INET : AF_INET6)).put((byte) 0 /* NFNETLINK_V0 */).putShort((short) 0);
    }

    private static int beginNested(ByteBuffer b, int type) {
        int at = b.position();
        b.putShort((short) 0).putShort((short) (type | NLA_F_NESTED));
        return at;
    }

    private static void endNested(ByteBuffer b, int at) { b.putShort(at, (short) (b.position() - at)); }

    private static void bytesAttr(ByteBuffer b, int type, byte[] v) {
        b.putShort((short) (4 + v.length)).putShort((short) type).put(v);
        pad(b);
    }

    /** An attribute holding the low {@code size} bytes of {@code v} in network order (size 1: a u8). */
    private static void intAttr(ByteBuffer b, int type, long v, int size) {
        b.putShort((short) (4 + size)).putShort((short) type);
        for (int i = size - 1; i >= 0; i--) b.put((byte) (v >>> 8 * i));
        pad(b);
    }

    private static void pad(ByteBuffer b) {
        while ((b.position() & 3) != 0) b.put((byte) 0);
    }

    /** An entry of {@link #acks}' array that no ACK has answered yet. */
    static final int NO_ACK = Integer.MIN_VALUE;

    /**
     * Records the ACKs of one datagram: {@code errnos[i]} becomes the errno (0: done) answering sequence
     * {@code firstSeq + i}, unless already answered. A message too short, or longer than the datagram, ends the walk
     * instead of reading past it.
     *
     * @return how many deletes this datagram answered for the first time
     */
    static int acks(ByteBuffer buf, int firstSeq, int[] errnos) {
        int answered = 0;
        for (int pos = 0; pos + NetlinkDump.NLMSG_HDRLEN <= buf.limit(); ) {
            int len = buf.getInt(pos);
            if (len < NetlinkDump.NLMSG_HDRLEN || pos + len > buf.limit()) break;
            int type = buf.getShort(pos + 4) & 0xffff;
            int idx = buf.getInt(pos + 8) - firstSeq;
            if (type == NetlinkDump.NLMSG_ERROR && len >= NetlinkDump.NLMSG_HDRLEN + 4 && idx >= 0 && idx < errnos.length
                    && errnos[idx] == NO_ACK) {
                errnos[idx] = -buf.getInt(pos + NetlinkDump.NLMSG_HDRLEN);
                answered++;
            }
            pos += NetlinkDump.align(len);
        }
        return answered;
    }

    /**
     * Parses the {@code IPCTNL_MSG_CT_NEW} messages of one dump datagram with sequence {@code seq} into {@code out};
     * true once {@code NLMSG_DONE} arrived. An error reply throws.
     */
    static boolean parseDump(ByteBuffer buf, int seq, IpFamily family, List<FlowEntry> out) throws IOException {
        return NetlinkDump.walk(buf, seq, "ctnetlink dump", (type, at, end) -> {
            if (type != type(IPCTNL_MSG_CT_NEW) || end - at < NetlinkDump.NFGENMSG_LEN) return;
            FlowEntry e = entry(buf, at, end);
            if (e != null && e.family() == family) out.add(e);
        });
    }

    /** One entry: nfgenmsg, then attributes. Entries without both tuples (none in practice) are skipped. */
    static FlowEntry entry(ByteBuffer buf, int at, int end) {
        int af = buf.get(at) & 0xff;
        IpFamily family = af == AF_INET ? IpFamily.IPV4 : af == AF_INET6 ? IpFamily.IPV6 : null;
        if (family == null) return null;
        Tuple orig = null, reply = null;
        int zone = 0;
        long id = 0;
        long status = 0;
        int tcpState = FlowEntry.NO_TCP_STATE;
        for (int pos = at + NetlinkDump.NFGENMSG_LEN; pos + 4 <= end; ) {
            int alen = buf.getShort(pos) & 0xffff;
            int atype = buf.getShort(pos + 2) & NLA_TYPE_MASK;
            if (alen < 4 || pos + alen > end) break;
            if (atype == CTA_TUPLE_ORIG) orig = tuple(buf, pos + 4, pos + alen);
            else if (atype == CTA_TUPLE_REPLY) reply = tuple(buf, pos + 4, pos + alen);
            else if (atype == CTA_ZONE && alen >= 6) zone = be16(buf, pos + 4);
            else if (atype == CTA_ID && alen >= 8) id = be32(buf, pos + 4);
            else if (atype == CTA_STATUS && alen >= 8) status = be32(buf, pos + 4);
            else if (atype == CTA_PROTOINFO) tcpState = tcpState(buf, pos + 4, pos + alen);
            pos += NetlinkDump.align(alen);
        }
        if (orig == null || reply == null || orig.src == null || orig.dst == null || reply.src == null || reply.dst == null) {
            return null;
        }
        return new FlowEntry(family, orig.proto, orig.src, orig.dst, orig.sport, orig.dport,
                reply.src, reply.dst, reply.sport, reply.dport, zone, id, tcpState, status);
    }

    /** CTA_PROTOINFO → CTA_PROTOINFO_TCP → CTA_PROTOINFO_TCP_STATE (u8), or NO_TCP_STATE for other protocols. */
    private static int tcpState(ByteBuffer buf, int at, int end) {
        int[] state = {FlowEntry.NO_TCP_STATE};
        NetlinkDump.attributes(buf, at, end, (type, start, stop) -> {
            if (type != CTA_PROTOINFO_TCP) return;
            NetlinkDump.attributes(buf, start, stop, (inner, from, to) -> {
                if (inner == CTA_PROTOINFO_TCP_STATE && to > from) state[0] = buf.get(from) & 0xff;
            });
        });
        return state[0];
    }

    private static final class Tuple {
        IpAddress src, dst;
        int proto, sport, dport;
    }

    private static Tuple tuple(ByteBuffer buf, int at, int end) {
        Tuple t = new Tuple();
        NetlinkDump.attributes(buf, at, end, (type, start, stop) -> {
            if (type == CTA_TUPLE_IP) ip(buf, start, stop, t);
            else if (type == CTA_TUPLE_PROTO) proto(buf, start, stop, t);
        });
        return t;
    }

    private static void ip(ByteBuffer buf, int at, int end, Tuple t) {
        NetlinkDump.attributes(buf, at, end, (type, start, stop) -> {
            int vlen = stop - start;
            boolean v4 = (type == CTA_IP_V4_SRC || type == CTA_IP_V4_DST) && vlen == 4;
            boolean v6 = (type == CTA_IP_V6_SRC || type == CTA_IP_V6_DST) && vlen == 16;
            if (!v4 && !v6) return;
            byte[] v = new byte[vlen];
            buf.get(start, v);
            if (type == CTA_IP_V4_SRC || type == CTA_IP_V6_SRC) t.src = IpAddress.of(v);
            else t.dst = IpAddress.of(v);
        });
    }

    private static void proto(ByteBuffer buf, int at, int end, Tuple t) {
        NetlinkDump.attributes(buf, at, end, (type, start, stop) -> {
            if (type == CTA_PROTO_NUM && stop - start >= 1) t.proto = buf.get(start) & 0xff;
            else if (type == CTA_PROTO_SRC_PORT && stop - start >= 2) t.sport = be16(buf, start);
            else if (type == CTA_PROTO_DST_PORT && stop - start >= 2) t.dport = be16(buf, start);
        });
    }

    private static int be16(ByteBuffer buf, int at) { return ((buf.get(at) & 0xff) << 8) | (buf.get(at + 1) & 0xff); }

    private static long be32(ByteBuffer buf, int at) { return Integer.toUnsignedLong(NetlinkDump.be32(buf, at)); }
}
