package io.nftproxy.netlink;

import io.nftproxy.nft.TableContent;
import io.nftproxy.net.IpFamily;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A throwaway network namespace for kernel tests, so nothing a test does can reach the host's own ruleset,
 * addresses or routes. Names are {@code nftp-<tag>-<pid>-<n>} ({@link OwnNamespaces}, which makes and deletes them):
 * unique per run and per instance, recognisable as ours. Every process runs with a bounded timeout and is killed
 * when it overruns; {@link #close()} deletes the namespace (and with it every table, address and interface inside)
 * and is safe to call twice. The code under test reaches the namespace through {@link #handle()}.
 *
 * <pre>{@code
 * try (KernelNamespace ns = KernelNamespace.create("rb")) {
 *     ns.load(script);
 *     String json = ns.listTable(IpFamily.IPV4);
 * }
 * }</pre>
 */
public final class KernelNamespace implements AutoCloseable {
    /** Generous for one {@code nft -f} of a test table; a hung netlink call fails the test instead of hanging it. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    private static final AtomicInteger COUNTER = new AtomicInteger();

    private final NetworkNamespace handle;
    private final String name;
    /** False for a namespace someone else made ({@link #borrow}): close() then leaves it. */
    private final boolean owned;
    private final String ip;
    private final String nft;
    private boolean closed;

    /** The result of one command. */
    public record Result(int exitCode, String stdout, String stderr) {
        public boolean ok() { return exitCode == 0; }

        static Result of(Commands.Result r) { return new Result(r.exitCode(), r.stdout(), r.stderr()); }
    }

    private KernelNamespace(NetworkNamespace handle, String ip, String nft, boolean owned) {
        this.handle = handle;
        this.owned = owned;
        this.name = handle.name().orElseThrow();
        this.ip = ip;
        this.nft = nft;
    }

    /**
     * Why kernel tests cannot run here, or empty when they can: they need root (CAP_NET_ADMIN in the initial user
     * namespace, to create namespaces), the {@code ip} and {@code nft} commands, and whatever else the caller names
     * (e.g. {@code conntrack}).
     */
    public static Optional<String> unavailabilityCause(String... alsoNeeded) {
        return OwnNamespaces.unavailabilityCause(alsoNeeded);
    }

    /** Creates {@code nftp-<tag>-<pid>-<n>}. {@code tag}: a few lowercase letters saying which test made it. */
    public static KernelNamespace create(String tag) throws IOException {
        return create(tag, String.valueOf(COUNTER.incrementAndGet()));
    }

    /**
     * Creates {@code nftp-<tag>-<pid>-<suffix>}, e.g. {@code nftp-demo-4711-k8s-node-1}: a name that says what the
     * namespace plays, for namespaces a person pokes at. The caller keeps suffixes unique within the process.
     */
    public static KernelNamespace create(String tag, String suffix) throws IOException {
        NetworkNamespace handle = OwnNamespaces.create(tag, suffix);
        return new KernelNamespace(handle, executable("ip").get(), executable("nft").get(), true);
    }

    /** This class's commands in {@code netns}, a named namespace someone else made and deletes (the demo's node). */
    public static KernelNamespace borrow(NetworkNamespace netns) {
        return new KernelNamespace(netns, executable("ip").orElseThrow(), executable("nft").orElseThrow(), false);
    }

    /** {@code nftp-<tag>-<pid>-}: what every namespace this process creates with {@code tag} starts with. */
    public static String prefix(String tag) { return OwnNamespaces.prefix(tag); }

    /** The namespaces this process created with {@code tag} that still exist, by name. */
    public static List<String> existing(String tag) throws IOException { return OwnNamespaces.existing(tag); }

    /** See {@link OwnNamespaces#deleteExisting}. */
    public static List<String> deleteExisting(String tag) throws IOException { return OwnNamespaces.deleteExisting(tag); }

    public String name() { return name; }

    /** This namespace as main code takes it. */
    public NetworkNamespace handle() { return handle; }

    /** Runs {@code command} inside the namespace, with {@code stdin} (or none) and a timeout. */
    public Result exec(Duration timeout, String stdin, String... command) throws IOException {
        if (closed) throw new IllegalStateException("namespace " + name + " is closed");
        return run(timeout, stdin, Stream.concat(Stream.of(ip, "netns", "exec", name), Stream.of(command)).toArray(String[]::new));
    }

    /** Runs {@code command} inside the namespace and returns its stdout; throws with its stderr unless it exits 0. */
    public String execChecked(String... command) throws IOException { return execCheckedWithInput(null, command); }

    /** Like {@link #execChecked} with {@code stdin} fed to the command. */
    public String execCheckedWithInput(String stdin, String... command) throws IOException {
        Result r = exec(DEFAULT_TIMEOUT, stdin, command);
        if (!r.ok()) {
            throw new IOException(String.join(" ", command) + " failed in " + name + " (exit " + r.exitCode() + "): " + r.stderr().strip());
        }
        return r.stdout();
    }

    /** {@code ip -n NAME args...}: stdout, or an exception with ip's message. */
    public String ip(String... args) throws IOException {
        Result r = run(DEFAULT_TIMEOUT, null, Stream.concat(Stream.of(ip, "-n", name), Stream.of(args)).toArray(String[]::new));
        if (!r.ok()) throw new IOException("ip -n " + name + " " + String.join(" ", args) + " failed: " + r.stderr().strip());
        return r.stdout();
    }

    /** {@code nft -f -} with the script on stdin; throws with nft's message if the transaction fails. */
    public void load(String script) throws IOException {
        Result r = exec(DEFAULT_TIMEOUT, script, nft, "-f", "-");
        if (!r.ok()) throw new IOException("nft -f - failed in " + name + " (exit " + r.exitCode() + "):\n" + r.stderr());
    }

    /** Like {@link #load} but returns the result, for scripts the kernel is expected to refuse. */
    public Result tryLoad(String script) throws IOException {
        return exec(DEFAULT_TIMEOUT, script, nft, "-f", "-");
    }

    /** {@code nft -j list table <family> kube-proxy}. */
    public String listTable(IpFamily family) throws IOException {
        return nftOut("-j", "list", "table", family.nftFamily(), TableContent.TABLE_NAME);
    }

    /** {@code nft list table <family> kube-proxy}, the text an operator reads. */
    public String listTableText(IpFamily family) throws IOException {
        return nftOut("list", "table", family.nftFamily(), TableContent.TABLE_NAME);
    }

    /** Runs nft with the given arguments and returns stdout; throws on failure. */
    public String nftOut(String... args) throws IOException {
        Result r = exec(DEFAULT_TIMEOUT, null, Stream.concat(Stream.of(nft), Stream.of(args)).toArray(String[]::new));
        if (!r.ok()) throw new IOException("nft " + String.join(" ", args) + " failed in " + name + ": " + r.stderr().strip());
        return r.stdout();
    }

    /** Deletes the namespace (unless {@linkplain #borrow borrowed}). Idempotent. */
    @Override public void close() throws IOException {
        if (closed) return;
        closed = true;
        if (owned) OwnNamespaces.delete(handle);
    }

    @Override public String toString() { return name; }

    /** See {@link Commands#run}. */
    public static Result run(Duration timeout, String stdin, String... argv) throws IOException {
        return Result.of(Commands.run(timeout, stdin, argv));
    }

    /** Runs a command where this process is (no shell) and returns its stdout; throws with its stderr unless it exits 0. */
    public static String runChecked(String... argv) throws IOException {
        Result r = run(DEFAULT_TIMEOUT, null, argv);
        if (!r.ok()) throw new IOException(String.join(" ", argv) + " failed (exit " + r.exitCode() + "): " + r.stderr().strip());
        return r.stdout();
    }

    /** Whether this process runs with effective uid 0. */
    public static boolean isRoot() { return Commands.isRoot(); }

    /** The absolute path of {@code cmd}, looked up in PATH and the sbin directories root's PATH may lack. */
    public static Optional<String> executable(String cmd) { return Commands.executable(cmd); }
}
