package io.nftproxy.netlink.lock;

import io.nftproxy.netlink.LibC;
import io.nftproxy.netlink.NetworkNamespace;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One writer per table: an exclusive lock held for as long as the daemon runs, scoped to its network namespace.
 * It is a listening AF_UNIX socket bound to an abstract address ({@code @nftproxy-lock}): the kernel keeps one
 * abstract namespace per network namespace, so two daemons in one namespace collide and two in different ones never
 * do; the lock dies with the process (kill -9 included), so there is no stale file to clean up. Without it, two
 * daemons rewrite each other's table many times a second, both reporting healthy (issue 10).
 *
 * <p>The loser learns who holds the lock by connecting: {@code SO_PEERCRED} on the connection gives the
 * listener's pid, and {@code /proc} its command. The holder accepts and closes such connections on a thread of its
 * own, so its backlog never fills.
 */
public final class NetnsLock implements AutoCloseable {
    /** The abstract address, without its leading NUL. */
    public static final String NAME = "nftproxy-lock";

    /** Another process holds the lock. */
    public static final class HeldException extends IOException {
        private final long holderPid;

        HeldException(String message, long holderPid) {
            super(message);
            this.holderPid = holderPid;
        }

        /** The holder's pid as this process sees it, or 0 when unknown (another pid namespace, say). */
        public long holderPid() { return holderPid; }
    }

    private final int fd;
    private final Thread acceptor;

    private NetnsLock(int fd) {
        this.fd = fd;
        this.acceptor = new Thread(this::acceptLoop, "netns-lock");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Takes the lock of {@code netns}.
     *
     * @throws HeldException when another process holds it; the message names that process
     * @throws IOException   when the socket cannot be made at all (other failures by {@link NetworkNamespace#call}'s rule)
     */
    public static NetnsLock acquire(NetworkNamespace netns) throws IOException {
        return new NetnsLock(netns.call(() -> bindListener(NAME)));
    }

    /**
     * Who holds the lock of {@code netns}, without taking it: one line naming the
     * process, or empty when nobody does. A holder whose backlog is full still counts as holding it.
     */
    public static java.util.Optional<String> holder(NetworkNamespace netns) throws IOException {
        return netns.call(NetnsLock::holder);
    }

    private static java.util.Optional<String> holder() throws IOException {
        LibC c = LibC.Holder.LIBC;
        int fd = c.socket(LibC.AF_UNIX, LibC.SOCK_STREAM | LibC.SOCK_CLOEXEC | LibC.SOCK_NONBLOCK, 0);
        if (fd < 0) throw new IOException("socket(AF_UNIX): " + LibC.Holder.describe(LibC.Holder.errno()));
        int errno;
        try {
            ByteBuffer addr = address(NAME);
            if (c.connect(fd, addr, addr.remaining()) == 0) return java.util.Optional.of(describeProcess(peerPid(fd)));
            errno = LibC.Holder.errno();
        } finally {
            c.close(fd);
        }
        // Nobody listens: refused. Anything else (EAGAIN: a full backlog) means someone does.
        if (errno == LibC.ECONNREFUSED) return java.util.Optional.empty();
        return java.util.Optional.of(describeProcess(0) + " (" + LibC.Holder.describe(errno) + ")");
    }

    private static long peerPid(int fd) {
        LibC c = LibC.Holder.LIBC;
        ByteBuffer cred = ByteBuffer.allocateDirect(12).order(ByteOrder.nativeOrder());
        ByteBuffer len = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder());
        len.putInt(0, 12);
        if (c.getsockopt(fd, LibC.SOL_SOCKET, LibC.SO_PEERCRED, cred, len) != 0) return 0;
        return Integer.toUnsignedLong(cred.getInt(0));
    }

    static int bindListener(String name) throws IOException {
        LibC c = LibC.Holder.LIBC;
        int fd = c.socket(LibC.AF_UNIX, LibC.SOCK_STREAM | LibC.SOCK_CLOEXEC, 0);
        if (fd < 0) throw new IOException("socket(AF_UNIX): " + LibC.Holder.describe(LibC.Holder.errno()));
        ByteBuffer addr = address(name);
        if (c.bind(fd, addr, addr.remaining()) != 0) {
            int errno = LibC.Holder.errno();
            c.close(fd);
            if (errno == LibC.EADDRINUSE) {
                long pid = holderPid(name);
                throw new HeldException("another nftproxy already writes the tables of this network namespace ("
                        + describeProcess(pid) + " holds @" + name + "); two writers would rewrite each other's "
                        + "tables without end. Stop it first, or run this one in another network namespace", pid);
            }
            throw new IOException("bind(@" + name + "): " + LibC.Holder.describe(errno));
        }
        if (c.listen(fd, 16) != 0) {
            int errno = LibC.Holder.errno();
            c.close(fd);
            throw new IOException("listen(@" + name + "): " + LibC.Holder.describe(errno));
        }
        return fd;
    }

    /** The holder's pid from a connection to it, or 0 when it cannot be learnt. */
    static long holderPid(String name) {
        LibC c = LibC.Holder.LIBC;
        // Non-blocking: a holder whose backlog is full must not hang our start.
        int fd = c.socket(LibC.AF_UNIX, LibC.SOCK_STREAM | LibC.SOCK_CLOEXEC | LibC.SOCK_NONBLOCK, 0);
        if (fd < 0) return 0;
        try {
            ByteBuffer addr = address(name);
            if (c.connect(fd, addr, addr.remaining()) != 0) return 0;
            return peerPid(fd);
        } finally {
            c.close(fd);
        }
    }

    /** {@code pid 4242 (java: nftproxy run --config ...)}, as far as /proc tells. */
    static String describeProcess(long pid) {
        if (pid <= 0) return "a process in another pid namespace";
        String cmd;
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            cmd = new String(raw, StandardCharsets.UTF_8).replace('\0', ' ').strip();
            if (cmd.length() > 200) cmd = cmd.substring(0, 200) + "...";
        } catch (IOException e) {
            cmd = "";
        }
        return cmd.isEmpty() ? "pid " + pid : "pid " + pid + " (" + cmd + ")";
    }

    /** A {@code struct sockaddr_un} for an abstract name: family, NUL, the name; its length is the address's. */
    private static ByteBuffer address(String name) {
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        ByteBuffer b = ByteBuffer.allocateDirect(2 + 1 + n.length).order(ByteOrder.nativeOrder());
        b.putShort((short) LibC.AF_UNIX).put((byte) 0).put(n);
        b.flip();
        return b;
    }

    private void acceptLoop() {
        LibC c = LibC.Holder.LIBC;
        while (true) {
            int conn = c.accept(fd, null, null);
            if (conn >= 0) {
                c.close(conn);
            } else if (LibC.Holder.errno() != LibC.EINTR) {
                return;   // shut down by close()
            }
        }
    }

    /** Releases the lock; another daemon may take it from now on. */
    @Override public void close() {
        LibC c = LibC.Holder.LIBC;
        // shutdown wakes the acceptor's blocking accept(); close alone would not.
        c.shutdown(fd, LibC.SHUT_RDWR);
        try {
            acceptor.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        c.close(fd);
    }
}
