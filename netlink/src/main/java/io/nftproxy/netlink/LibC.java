package io.nftproxy.netlink;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.types.size_t;
import jnr.ffi.types.ssize_t;

import java.nio.ByteBuffer;

/**
 * Raw libc binding, names verbatim, no logic: joining a network namespace, netlink sockets, and AF_UNIX sockets in
 * the abstract namespace. The JDK has no setns and no AF_NETLINK, its UnixDomainSocketAddress takes only file-system
 * paths, and jnr-posix has no {@code socket}/{@code bind}/{@code setsockopt}, hence these.
 *
 * <p>Pitfall: jnr-ffi passes a direct ByteBuffer's address <em>at its current position</em>: {@code flip()}
 * before {@code bind}/{@code connect}/{@code send}, {@code clear()} before {@code recv}.
 */
public interface LibC {
    int O_RDONLY = 0;
    int O_CLOEXEC = 0x80000;
    int CLONE_NEWNET = 0x40000000;

    int AF_UNIX = 1;
    int AF_NETLINK = 16;
    int SOCK_STREAM = 1;
    int SOCK_RAW = 3;
    int SOCK_NONBLOCK = 0x800;
    int SOCK_CLOEXEC = 0x80000;
    int NETLINK_ROUTE = 0;
    int NETLINK_NETFILTER = 12;
    int SOL_SOCKET = 1;
    int SO_RCVBUF = 8;
    int SO_PEERCRED = 17;
    int SO_RCVTIMEO = 20;
    int SO_RCVBUFFORCE = 33;
    int SOL_NETLINK = 270;
    int NETLINK_ADD_MEMBERSHIP = 1;
    int SHUT_RDWR = 2;
    int MSG_DONTWAIT = 0x40;
    int MSG_TRUNC = 0x20;

    int EPERM = 1;
    int EINTR = 4;
    int EAGAIN = 11;
    int EADDRINUSE = 98;
    /** On a multicast listener: the kernel dropped notifications because the receive buffer was full. */
    int ENOBUFS = 105;
    int ECONNREFUSED = 111;

    @SaveError
    int open(String path, int flags);

    @SaveError
    int setns(int fd, int nstype);

    @SaveError
    int close(int fd);

    @SaveError
    int socket(int domain, int type, int protocol);

    @SaveError
    int bind(int sockfd, ByteBuffer addr, int addrlen);

    @SaveError
    int listen(int sockfd, int backlog);

    @SaveError
    int accept(int sockfd, ByteBuffer addr, ByteBuffer addrlen);

    @SaveError
    int connect(int sockfd, ByteBuffer addr, int addrlen);

    @SaveError
    int getsockopt(int sockfd, int level, int optname, ByteBuffer optval, ByteBuffer optlen);

    @SaveError
    int setsockopt(int sockfd, int level, int optname, ByteBuffer optval, int optlen);

    @SaveError
    int shutdown(int sockfd, int how);

    @SaveError
    @ssize_t long send(int sockfd, ByteBuffer buf, @size_t long len, int flags);

    @SaveError
    @ssize_t long recv(int sockfd, ByteBuffer buf, @size_t long len, int flags);

    String strerror(int errnum);

    /** Loaded on first use; libc is always present where this code can run at all. */
    final class Holder {
        public static final LibC LIBC = LibraryLoader.create(LibC.class).load("c");

        private Holder() {}

        /** The errno the last {@code @SaveError} call on this thread left. */
        public static int errno() { return Runtime.getRuntime(LIBC).getLastError(); }

        /** {@code "No such file or directory (errno 2)"}. */
        public static String describe(int errno) { return LIBC.strerror(errno) + " (errno " + errno + ")"; }
    }
}
