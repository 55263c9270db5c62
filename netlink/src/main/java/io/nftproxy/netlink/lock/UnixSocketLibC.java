package io.nftproxy.netlink.lock;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;

import java.nio.ByteBuffer;

/**
 * Raw libc binding for AF_UNIX sockets in the abstract namespace, names verbatim, no logic. The JDK's
 * UnixDomainSocketAddress takes only file-system paths, hence these.
 *
 * <p>jnr-ffi passes a direct ByteBuffer's address at its current position: {@code flip()} before passing one in.
 */
public interface UnixSocketLibC {
    int AF_UNIX = 1;
    int SOCK_STREAM = 1;
    int SOCK_NONBLOCK = 0x800;
    int SOCK_CLOEXEC = 0x80000;
    int SOL_SOCKET = 1;
    int SO_PEERCRED = 17;
    int SHUT_RDWR = 2;
    int EADDRINUSE = 98;
    int EINTR = 4;
    int ECONNREFUSED = 111;

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
    int shutdown(int sockfd, int how);

    @SaveError
    int close(int fd);

    /** Loaded on first use. */
    final class Holder {
        static final UnixSocketLibC LIBC = LibraryLoader.create(UnixSocketLibC.class).load("c");

        private Holder() {}

        static int errno() { return Runtime.getRuntime(LIBC).getLastError(); }
    }
}
