package io.nftproxy.netlink.rt;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Walks the messages of one datagram of a netlink dump: every message of our sequence number goes to the handler
 * until {@code NLMSG_DONE}; an error reply throws; other sequence numbers (a late reply to an earlier request) are
 * skipped. Shared by the rtnetlink address dump and the ctnetlink conntrack dump.
 */
public final class NetlinkDump {
    public static final int NLMSG_HDRLEN = 16;
    public static final int NLMSG_ERROR = 2;
    public static final int NLMSG_DONE = 3;

    /** Receives one message: its type and the bounds of its payload (after the netlink header). */
    @FunctionalInterface
    public interface Handler {
        void message(int type, int payloadStart, int end);
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
                    if (err != 0) throw NetlinkSocket.error(call, -err);
                } else {
                    handler.message(type, pos + NLMSG_HDRLEN, pos + len);
                }
            }
            pos += (len + 3) & ~3;
        }
        return false;
    }
}
