package io.nftproxy.netlink.rt;

import io.nftproxy.netlink.LibC;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A bound AF_NETLINK socket, in the network namespace of the thread that opened it (see
 * {@link io.nftproxy.netlink.NetnsThread}). Not thread-safe; one request/response exchange at a time.
 */
public final class NetlinkSocket implements AutoCloseable {
    private static final int SOCKADDR_NL_SIZE = 12;

    private final LibC libc = LibC.Holder.LIBC;
    private int fd;

    private NetlinkSocket(int fd) { this.fd = fd; }

    /** Opens and binds a netlink socket of {@code protocol} ({@link LibC#NETLINK_ROUTE}, ...). */
    public static NetlinkSocket open(int protocol) throws IOException { return open(protocol, s -> {}); }

    /** Configures a freshly opened {@link NetlinkSocket}. */
    @FunctionalInterface
    public interface Setup {
        void apply(NetlinkSocket socket) throws IOException;
    }

    /** {@link #open(int)}, then {@code setup} on the socket; the socket is closed again if either fails. */
    public static NetlinkSocket open(int protocol, Setup setup) throws IOException {
        LibC libc = LibC.Holder.LIBC;
        int fd = libc.socket(LibC.AF_NETLINK, LibC.SOCK_RAW | LibC.SOCK_CLOEXEC, protocol);
        if (fd < 0) throw new NetlinkException("socket(AF_NETLINK, " + protocol + ")", LibC.Holder.errno());
        NetlinkSocket s = new NetlinkSocket(fd);
        try {
            // struct sockaddr_nl { sa_family_t nl_family; unsigned short nl_pad; __u32 nl_pid; __u32 nl_groups; }
            // nl_pid 0: the kernel assigns a unique port id.
            ByteBuffer addr = ByteBuffer.allocateDirect(SOCKADDR_NL_SIZE).order(ByteOrder.nativeOrder());
            addr.putShort((short) LibC.AF_NETLINK).putShort((short) 0).putInt(0).putInt(0).flip();
            if (libc.bind(fd, addr, SOCKADDR_NL_SIZE) != 0) throw new NetlinkException("bind(netlink)", LibC.Holder.errno());
            setup.apply(s);
        } catch (IOException e) {
            s.close();
            throw e;
        }
        return s;
    }

    /** Sends the buffer's remaining bytes as one datagram. */
    public void send(ByteBuffer msg) throws IOException {
        int len = msg.remaining();
        long n = libc.send(live(), msg, len, 0);
        if (n < 0) throw new NetlinkException("send(netlink)", LibC.Holder.errno());
        if (n != len) throw new IOException("send(netlink): short write " + n + " of " + len);
    }

    /**
     * Receives one datagram into {@code buf} (cleared first; on return positioned at 0 with the limit at the
     * datagram's end), waiting at most until {@code deadlineNanos} ({@link System#nanoTime()} scale).
     * Polls non-blocking so no call can hang: netlink replies to a request arrive within microseconds.
     */
    public void receive(ByteBuffer buf, long deadlineNanos) throws IOException {
        int fd = live();
        long pause = 20_000; // ns; doubles up to 1 ms
        while (true) {
            buf.clear();
            long n = libc.recv(fd, buf, buf.capacity(), LibC.MSG_DONTWAIT | LibC.MSG_TRUNC);
            if (n >= 0) {
                if (n > buf.capacity()) throw new IOException("netlink message of " + n + " bytes truncated to " + buf.capacity());
                buf.limit((int) n);
                return;
            }
            int errno = LibC.Holder.errno();
            if (errno != LibC.EAGAIN && errno != LibC.EINTR) throw new NetlinkException("recv(netlink)", errno);
            if (System.nanoTime() - deadlineNanos > 0) throw new IOException("recv(netlink): no reply before the deadline");
            java.util.concurrent.locks.LockSupport.parkNanos(pause);
            pause = Math.min(pause * 2, 1_000_000);
        }
    }

    private int live() throws IOException {
        if (fd < 0) throw new IOException("netlink socket closed");
        return fd;
    }

    /**
     * Joins multicast group {@code group} (1-based, as the kernel's {@code NFNLGRP_*} and {@code RTNLGRP_*}
     * constants are). Through the socket option rather than the bind mask, which only reaches groups 1 to 32.
     */
    public void joinGroup(int group) throws IOException {
        ByteBuffer v = intOption(group);
        if (libc.setsockopt(live(), LibC.SOL_NETLINK, LibC.NETLINK_ADD_MEMBERSHIP, v, 4) != 0) {
            throw new NetlinkException("setsockopt(NETLINK_ADD_MEMBERSHIP, " + group + ")", LibC.Holder.errno());
        }
    }

    /**
     * Asks for a receive queue of {@code bytes}. A listener needs more than the default (about 200 KiB) to ride
     * out a burst of notifications. {@code SO_RCVBUFFORCE} passes {@code net.core.rmem_max} with CAP_NET_ADMIN;
     * without it the plain option is capped by that sysctl, which is still better than the default.
     */
    public void setReceiveBuffer(int bytes) throws IOException {
        int fd = live();
        if (libc.setsockopt(fd, LibC.SOL_SOCKET, LibC.SO_RCVBUFFORCE, intOption(bytes), 4) == 0) return;
        if (libc.setsockopt(fd, LibC.SOL_SOCKET, LibC.SO_RCVBUF, intOption(bytes), 4) != 0) {
            throw new NetlinkException("setsockopt(SO_RCVBUF, " + bytes + ")", LibC.Holder.errno());
        }
    }

    /** Bounds each {@link #receiveWaiting} call, so a reader thread notices a stop request within this time. */
    public void setReceiveTimeout(long millis) throws IOException {
        if (millis <= 0) throw new IllegalArgumentException("timeout must be positive, got " + millis);
        // struct timeval { time_t tv_sec; suseconds_t tv_usec; }: two longs on 64-bit Linux
        ByteBuffer tv = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
        tv.putLong(millis / 1000).putLong((millis % 1000) * 1000).flip();
        if (libc.setsockopt(live(), LibC.SOL_SOCKET, LibC.SO_RCVTIMEO, tv, 16) != 0) {
            throw new NetlinkException("setsockopt(SO_RCVTIMEO)", LibC.Holder.errno());
        }
    }

    /**
     * Blocks for one datagram, at most the {@linkplain #setReceiveTimeout receive timeout}. Returns the datagram's
     * full length (which exceeds the buffer's capacity if it was truncated; the buffer then holds the first part),
     * or -1 when the timeout passed with nothing to read. A listener that fell behind gets a
     * {@link NetlinkException} whose {@link NetlinkException#isOverrun()} is true, once; the socket stays usable.
     */
    public long receiveWaiting(ByteBuffer buf) throws IOException {
        int fd = live();
        buf.clear();
        long n = libc.recv(fd, buf, buf.capacity(), LibC.MSG_TRUNC);
        if (n >= 0) {
            buf.limit((int) Math.min(n, buf.capacity()));
            return n;
        }
        int errno = LibC.Holder.errno();
        buf.limit(0);
        if (errno == LibC.EAGAIN || errno == LibC.EINTR) return -1;
        throw new NetlinkException("recv(netlink)", errno);
    }

    private static ByteBuffer intOption(int value) {
        return ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder()).putInt(value).flip();
    }

    @Override public void close() {
        if (fd < 0) return;
        libc.close(fd);
        fd = -1;
    }
}
