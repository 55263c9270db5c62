package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.LibC;
import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.rt.NetlinkDump;
import io.nftproxy.netlink.rt.NetlinkSocket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;

/**
 * The nf_tables ruleset generation of one network namespace ({@code NFT_MSG_GETGEN}), read over nfnetlink. The
 * kernel increments it on every commit that changed anything, whoever made it and whichever table it touched, and
 * never otherwise: two equal readings prove that nobody committed in between. About a hundred microseconds per
 * reading, whatever the size of the ruleset. Not thread-safe: one socket, one request at a time.
 */
public final class RulesetGeneration implements AutoCloseable {
    static final int NFNL_SUBSYS_NFTABLES = 10;
    static final int NFT_MSG_NEWGEN = 15;
    static final int NFT_MSG_GETGEN = 16;
    static final int NFTA_GEN_ID = 1;
    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final NetlinkSocket socket;
    private final ByteBuffer buf = ByteBuffer.allocateDirect(8 << 10).order(ByteOrder.nativeOrder());
    private int seq = (int) (System.nanoTime() & 0x7fff_0000);

    private RulesetGeneration(NetlinkSocket socket) { this.socket = socket; }

    /** Reads the generation of the calling thread's namespace (the daemon's own). */
    public static RulesetGeneration open() throws IOException {
        return new RulesetGeneration(NetlinkSocket.open(LibC.NETLINK_NETFILTER));
    }

    /** Reads the generation of {@code netns}: the socket is made there, and stays there for life. */
    public static RulesetGeneration openIn(NetworkNamespace netns) throws IOException {
        return netns.call(RulesetGeneration::open);
    }

    /** The current generation, an unsigned 32-bit number. */
    public long current() throws IOException {
        int s = ++seq;
        socket.send(request(s));
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        long[] gen = {-1};
        // An ack-less GET answers with one NEWGEN message; an error arrives as NLMSG_ERROR and throws in walk.
        while (gen[0] < 0) {
            socket.receive(buf, deadline);
            NetlinkDump.walk(buf, s, "NFT_MSG_GETGEN", (type, start, end) -> {
                if (type == (NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWGEN)) gen[0] = generation(buf, start, end);
            });
        }
        return gen[0];
    }

    /** {@code nlmsghdr} + {@code nfgenmsg} (family unspecified, version 0, resource id 0). */
    static ByteBuffer request(int seq) {
        ByteBuffer b = NetlinkDump.request(NetlinkDump.NFGENMSG_LEN, NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_GETGEN,
                NetlinkDump.NLM_F_REQUEST, seq);
        b.put((byte) 0).put((byte) 0).putShort((short) 0);
        return b.flip();
    }

    /** {@code NFTA_GEN_ID} of a NEWGEN payload (after the netlink header): big-endian, as nf_tables writes it. */
    static long generation(ByteBuffer buf, int start, int end) {
        long[] gen = {-1};
        NetlinkDump.attributes(buf, start + NetlinkDump.NFGENMSG_LEN, end, (type, at, stop) -> {
            if (type == NFTA_GEN_ID && stop - at == 4 && gen[0] < 0) gen[0] = Integer.toUnsignedLong(NetlinkDump.be32(buf, at));
        });
        if (gen[0] < 0) throw new IllegalStateException("NEWGEN reply without NFTA_GEN_ID");
        return gen[0];
    }

    @Override public void close() { socket.close(); }
}
