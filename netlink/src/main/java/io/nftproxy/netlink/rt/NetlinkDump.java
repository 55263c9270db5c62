package io.nftproxy.netlink.rt;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Walks the messages of one datagram of a netlink dump: every message of our sequence number goes to the handler
 * until {@code NLMSG_DONE}; an error reply throws; other sequence numbers (a late reply to an earlier request) are
 * skipped. Shared by the rtnetlink address dump and the ctnetlink conntrack dump, with the attribute walk and the
 * wire constants every netlink parser here uses.
 */
public final class NetlinkDump {
    public static final int NLMSG_HDRLEN = 16;
    /** {@code struct nfgenmsg}, the header every nfnetlink (nf_tables, ctnetlink) message starts its payload with. */
    public static final int NFGENMSG_LEN = 4;
    public static final int NLMSG_ERROR = 2;
    public static final int NLMSG_DONE = 3;
    public static final int NLM_F_REQUEST = 1;
    public static final int NLM_F_DUMP = 0x300;

    /**
     * Receives one message or attribute: its type (an attribute's without {@code NLA_F_NESTED} /
     * {@code NLA_F_NET_BYTEORDER}) and the bounds of its payload (after the netlink or attribute header).
     */
    @FunctionalInterface
    public interface Handler {
        void accept(int type, int payloadStart, int end);
    }

    private NetlinkDump() {}

    /** @return true once {@code NLMSG_DONE} arrived */
    public static boolean walk(ByteBuffer buf, int seq, String call, Handler handler) throws IOException {
        int pos = 0;
        int end = buf.limit();
        while (pos + NLMSG_HDRLEN <= end) {
            int len = buf.getInt(pos);
            int type = buf.getShort(pos + 4) & 0xffff;
            int msgSeq = buf.getInt(pos + 8);
            if (len < NLMSG_HDRLEN || pos + len > end) throw new IOException("malformed netlink message, length " + len);
            if (msgSeq == seq) {
                if (type == NLMSG_DONE) return true;
                if (type == NLMSG_ERROR) {
                    int err = buf.getInt(pos + NLMSG_HDRLEN);
                    if (err != 0) throw new NetlinkException(call, -err);
                } else {
                    handler.accept(type, pos + NLMSG_HDRLEN, pos + len);
                }
            }
            pos += align(len);
        }
        return false;
    }

    /** A direct buffer holding the {@code struct nlmsghdr} of a request; the caller puts the payload and flips it. */
    public static ByteBuffer request(int payloadLen, int type, int flags, int seq) {
        ByteBuffer b = ByteBuffer.allocateDirect(NLMSG_HDRLEN + payloadLen).order(ByteOrder.nativeOrder());
        return header(b, NLMSG_HDRLEN + payloadLen, type, flags, seq);
    }

    /** Puts a {@code struct nlmsghdr} (port id 0: the kernel's) at {@code b}'s position; {@code len} may be patched later. */
    public static ByteBuffer header(ByteBuffer b, int len, int type, int flags, int seq) {
        return b.putInt(len).putShort((short) type).putShort((short) flags).putInt(seq).putInt(0);
    }

    /** Walks the attributes ({@code struct nlattr}) in [at, end), stopping at the first with a malformed length. */
    public static void attributes(ByteBuffer buf, int at, int end, Handler handler) {
        for (int pos = at; pos + 4 <= end; ) {
            int alen = buf.getShort(pos) & 0xffff;
            if (alen < 4 || pos + alen > end) return;
            handler.accept(buf.getShort(pos + 2) & 0x3fff, pos + 4, pos + alen);
            pos += align(alen);
        }
    }

    /** Messages and attributes start on 4-byte boundaries. */
    public static int align(int len) { return (len + 3) & ~3; }

    /** The four bytes at {@code at} in network order, whatever the buffer's order. */
    public static int be32(ByteBuffer buf, int at) {
        return (buf.get(at) & 0xff) << 24 | (buf.get(at + 1) & 0xff) << 16 | (buf.get(at + 2) & 0xff) << 8 | (buf.get(at + 3) & 0xff);
    }
}
