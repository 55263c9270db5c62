package io.nftproxy.netlink.rt;

import io.nftproxy.netlink.LibC;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Lists the interface addresses of the calling thread's network namespace with an rtnetlink {@code RTM_GETADDR}
 * dump, what {@code ip addr} shows. Run it on a {@link io.nftproxy.netlink.NetnsThread} for another namespace.
 */
public final class AddressDump {
    static final int RTM_NEWADDR = 20;
    static final int RTM_GETADDR = 22;
    static final int IFA_ADDRESS = 1;
    static final int IFA_LOCAL = 2;
    static final int AF_UNSPEC = 0;
    static final int AF_INET = 2;
    static final int AF_INET6 = 10;

    private static final int RECV_BUFFER = 64 * 1024;
    private static final int MAX_DATAGRAMS = 100_000;
    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final AtomicInteger SEQ = new AtomicInteger((int) (System.nanoTime() & 0x7fff_0000));

    private AddressDump() {}

    /** Every IPv4 and IPv6 address, in the kernel's order. */
    public static List<InterfaceAddress> dump() throws IOException {
        int seq = SEQ.incrementAndGet();
        try (NetlinkSocket s = NetlinkSocket.open(LibC.NETLINK_ROUTE)) {
            s.send(request(seq));
            List<InterfaceAddress> out = new ArrayList<>();
            ByteBuffer buf = ByteBuffer.allocateDirect(RECV_BUFFER).order(ByteOrder.nativeOrder());
            long deadline = System.nanoTime() + TIMEOUT_NANOS;
            for (int i = 0; i < MAX_DATAGRAMS; i++) {
                s.receive(buf, deadline);
                if (parse(buf, seq, out)) return out;
            }
            throw new IOException("RTM_GETADDR dump did not end after " + MAX_DATAGRAMS + " datagrams");
        }
    }

    /** {@code struct nlmsghdr} + {@code struct ifaddrmsg} asking for all families. */
    static ByteBuffer request(int seq) {
        ByteBuffer b = NetlinkDump.request(8, RTM_GETADDR, NetlinkDump.NLM_F_REQUEST | NetlinkDump.NLM_F_DUMP, seq);
        b.put((byte) AF_UNSPEC).put((byte) 0).put((byte) 0).put((byte) 0).putInt(0); // family, prefixlen, flags, scope, index
        return b.flip();
    }

    /**
     * Parses one datagram of the dump into {@code out}; true once {@code NLMSG_DONE} arrived. Messages with another
     * sequence number are skipped.
     */
    static boolean parse(ByteBuffer buf, int seq, List<InterfaceAddress> out) throws IOException {
        return NetlinkDump.walk(buf, seq, "RTM_GETADDR", (type, at, end) -> {
            if (type != RTM_NEWADDR) return;
            InterfaceAddress a = address(buf, at, end);
            if (a != null) out.add(a);
        });
    }

    /** {@code struct ifaddrmsg} then attributes; IFA_LOCAL wins over IFA_ADDRESS (the peer on point-to-point links). */
    private static InterfaceAddress address(ByteBuffer buf, int at, int end) {
        int family = buf.get(at) & 0xff;
        int prefixLen = buf.get(at + 1) & 0xff;
        int scope = buf.get(at + 3) & 0xff;
        int ifindex = buf.getInt(at + 4);
        IpFamily f = family == AF_INET ? IpFamily.IPV4 : family == AF_INET6 ? IpFamily.IPV6 : null;
        if (f == null) return null;
        byte[][] byType = new byte[IFA_LOCAL + 1][];
        NetlinkDump.attributes(buf, at + 8, end, (type, start, stop) -> {
            if ((type == IFA_LOCAL || type == IFA_ADDRESS) && stop - start == f.bits() / 8) {
                byType[type] = new byte[stop - start];
                buf.get(start, byType[type]);
            }
        });
        byte[] a = byType[IFA_LOCAL] != null ? byType[IFA_LOCAL] : byType[IFA_ADDRESS];
        return a == null ? null : new InterfaceAddress(ifindex, f, IpAddress.of(a), prefixLen, scope);
    }
}
