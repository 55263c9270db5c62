package io.nftproxy.netlink.rt;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.types.size_t;
import jnr.ffi.types.ssize_t;

import java.nio.ByteBuffer;

/**
 * Raw libc binding for netlink sockets, names verbatim, no logic. The JDK has no AF_NETLINK and jnr-posix has no
 * {@code socket}/{@code bind}/{@code setsockopt}, hence these.
 *
 * <p>Pitfall: jnr-ffi passes a direct ByteBuffer's address <em>at its current position</em>: {@code flip()}
 * before {@code bind}/{@code send}, {@code clear()} before {@code recv}.
 */
public interface NetlinkLibC {
    int AF_NETLINK = 16;
    int SOCK_RAW = 3;
    int SOCK_CLOEXEC = 0x80000;
    int NETLINK_ROUTE = 0;
    int NETLINK_NETFILTER = 12;
    int SOL_SOCKET = 1;
    int SO_RCVBUF = 8;
    int SO_RCVTIMEO = 20;
    int SO_RCVBUFFORCE = 33;
    int SOL_NETLINK = 270;
    int NETLINK_ADD_MEMBERSHIP = 1;
    int MSG_DONTWAIT = 0x40;
    int MSG_TRUNC = 0x20;
    int EAGAIN = 11;
    int EINTR = 4;
    int EPERM = 1;
    /** On a multicast listener: the kernel dropped notifications because the receive buffer was full. */
    int ENOBUFS = 105;

    @SaveError
    int socket(int domain, int type, int protocol);

    @SaveError
    int bind(int sockfd, ByteBuffer addr, int addrlen);

    @SaveError
    int setsockopt(int sockfd, int level, int optname, ByteBuffer optval, int optlen);

    @SaveError
    @ssize_t long send(int sockfd, ByteBuffer buf, @size_t long len, int flags);

    @SaveError
    @ssize_t long recv(int sockfd, ByteBuffer buf, @size_t long len, int flags);

    @SaveError
    int close(int fd);

    /** Loaded on first use. */
    final class Holder {
        static final NetlinkLibC LIBC = LibraryLoader.create(NetlinkLibC.class).load("c");

        private Holder() {}

        static int errno() { return Runtime.getRuntime(LIBC).getLastError(); }
    }
}
