package io.nftproxy.netlink;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Where main code reaches the node: this process's own network namespace ({@link #host()}), or a named one under
 * {@code /run/netns} ({@link #named}) that kernel tests, {@code --netns} and the demo use. Every nft client, lock,
 * monitor, address dump, conntrack and sysctl access, leftover sweep and node command is opened through one of these,
 * so "which network" is decided once, where the option is parsed, and never again by a null check.
 *
 * <p>A named namespace is reached from a thread that joined it ({@link NetnsThread}) or by {@code ip netns exec};
 * the process itself never moves. A value: two handles for the same name are equal.
 */
public final class NetworkNamespace {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}");
    private static final NetworkNamespace HOST = new NetworkNamespace(null);

    /** Null for the process's own namespace; only this class looks at it. */
    private final String name;

    private NetworkNamespace(String name) { this.name = name; }

    /** The network namespace this process runs in. */
    public static NetworkNamespace host() { return HOST; }

    /**
     * {@code /run/netns/NAME}, as {@code ip netns add NAME} creates it.
     *
     * @throws IllegalArgumentException when {@code name} is not a namespace name (1-64 of {@code [A-Za-z0-9_.-]},
     *                                  not starting with {@code .} or {@code -}), which could escape /run/netns
     */
    public static NetworkNamespace named(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("not a network namespace name: " + name
                    + " (allowed: 1 to 64 of A-Z a-z 0-9 _ . -, starting with a letter, digit or _)");
        }
        return new NetworkNamespace(name);
    }

    /** The name under /run/netns; empty for the process's own namespace. */
    public Optional<String> name() { return Optional.ofNullable(name); }

    /** One line for logs: {@code this network namespace} or {@code network namespace NAME}. */
    public String describe() { return name().map(n -> "network namespace " + n).orElse("this network namespace"); }

    /**
     * Runs {@code task} in this namespace and waits for it: on the caller's thread for the host, on a thread started
     * for it (and stopped after) for a named one. Every failure leaves as the task's own IOException or as one IOException,
     * by one rule:
     * <ul>
     * <li>an {@link IOException} (the task's, or the failure to join the namespace) is thrown unchanged;</li>
     * <li>an {@link InterruptedException} (the wait interrupted, or the task's own) becomes an
     *     {@link InterruptedIOException}, and the caller's interrupt flag is set again;</li>
     * <li>any other exception, checked or unchecked (a {@code NumberFormatException} from a sysctl file, say),
     *     becomes an IOException with its message (its class name when it has none) and it as the cause, so a caller
     *     that reports failures line by line needs one catch;</li>
     * <li>an {@link Error} is thrown unchanged.</li>
     * </ul>
     */
    public <T> T call(Callable<T> task) throws IOException {
        try (Session s = session()) {
            return s.call(task);
        }
    }

    /**
     * A session that keeps one thread in this namespace between calls (none for the host: calls run on the caller's
     * thread), for a caller that calls often, such as the daemon's conntrack cleanup each sync. Calls follow
     * {@link #call}'s rule; {@link Session#close} stops the thread.
     */
    public Session session() { return new Session(this); }

    /**
     * A dedicated thread in this namespace for thread-confined resources (a libnftables context): one that joined
     * {@code /run/netns/NAME} (named {@code netns-NAME}), or for the host one named {@code hostThreadName}.
     */
    public NetnsThread thread(String hostThreadName) throws IOException {
        return name == null ? NetnsThread.host(hostThreadName) : NetnsThread.start(this, name);
    }

    /** {@code argv} as it runs in this namespace: itself for the host, behind {@code ip netns exec NAME} otherwise. */
    public String[] command(String... argv) {
        Stream<String> prefix = name == null ? Stream.empty() : Stream.of("ip", "netns", "exec", name);
        return Stream.concat(prefix, Stream.of(argv)).toArray(String[]::new);
    }

    /** Runs {@link #command(String...) argv} in this namespace, bounded by {@code timeout}; see {@link Commands#run}. */
    public Commands.Result exec(Duration timeout, String stdin, String... argv) throws IOException {
        return Commands.run(timeout, stdin, command(argv));
    }

    @Override public boolean equals(Object o) { return o instanceof NetworkNamespace n && Objects.equals(name, n.name); }

    @Override public int hashCode() { return Objects.hashCode(name); }

    /** The name, or {@code host}: what {@code --netns} takes. */
    @Override public String toString() { return name().orElse("host"); }

    /** Calls in one namespace on one kept thread; see {@link NetworkNamespace#session()}. */
    public static final class Session implements AutoCloseable {
        private final NetworkNamespace namespace;
        /** Started on first use; none for the host. */
        private NetnsThread thread;

        private Session(NetworkNamespace namespace) { this.namespace = namespace; }

        /** Runs {@code task} in the namespace; failures by {@link NetworkNamespace#call}'s rule. */
        public <T> T call(Callable<T> task) throws IOException {
            try {
                return namespace.name == null ? task.call() : thread().call(task);
            } catch (IOException e) {
                throw e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                InterruptedIOException io = new InterruptedIOException("interrupted in " + namespace.describe());
                io.initCause(e);
                throw io;
            } catch (Exception e) {
                // Some exceptions (an interrupted wait among them) have no message: name them rather than print "null".
                throw new IOException(e.getMessage() == null ? e.toString() : e.getMessage(), e);
            }
        }

        private synchronized NetnsThread thread() throws IOException {
            if (thread == null) thread = NetnsThread.start(namespace, namespace.name);
            return thread;
        }

        /** Stops the kept thread, if any, after the calls already queued. */
        @Override public synchronized void close() {
            if (thread != null) thread.close();
            thread = null;
        }
    }
}
