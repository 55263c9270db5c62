package io.nftproxy.netlink;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;

/** Raw libc binding for joining a network namespace, names verbatim, no logic. */
public interface NamespaceLibC {
    int O_RDONLY = 0;
    int O_CLOEXEC = 0x80000;
    int CLONE_NEWNET = 0x40000000;

    @SaveError
    int open(String path, int flags);

    @SaveError
    int setns(int fd, int nstype);

    @SaveError
    int close(int fd);

    String strerror(int errnum);

    /** Loaded on first use; libc is always present where this code can run at all. */
    final class Holder {
        public static final NamespaceLibC LIBC = LibraryLoader.create(NamespaceLibC.class).load("c");

        private Holder() {}

        /** The errno the last {@code @SaveError} call on this thread left. */
        public static int errno() { return Runtime.getRuntime(LIBC).getLastError(); }

        /** {@code "No such file or directory (errno 2)"}. */
        public static String describe(int errno) { return LIBC.strerror(errno) + " (errno " + errno + ")"; }
    }
}
