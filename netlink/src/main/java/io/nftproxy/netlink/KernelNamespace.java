package io.nftproxy.netlink;

import io.nftproxy.nft.TableContent;
import io.nftproxy.net.IpFamily;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A throwaway network namespace for kernel tests and the demo, so nothing a test does can reach the host's own ruleset,
 * addresses or routes. Names are {@code nftp-<tag>-<pid>-<n>}: unique per run and per instance, recognisable as
 * ours. Every process runs with a bounded timeout and is killed when it overruns; {@link #close()} deletes the
 * namespace (and with it every table, address and interface inside) and is safe to call twice.
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
    private static final List<String> SBIN = List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin");

    private final String name;
    private final String ip;
    private final String nft;
    private boolean closed;

    /** The result of one command. */
    public record Result(int exitCode, String stdout, String stderr) {
        public boolean ok() { return exitCode == 0; }
    }

    private KernelNamespace(String name, String ip, String nft) {
        this.name = name;
        this.ip = ip;
        this.nft = nft;
    }

    /**
     * Why kernel tests cannot run here, or empty when they can: they need root (CAP_NET_ADMIN in the initial user
     * namespace, to create namespaces), the {@code ip} and {@code nft} commands, and whatever else the caller names
     * (e.g. {@code conntrack}).
     */
    public static Optional<String> unavailabilityCause(String... alsoNeeded) {
        if (!isRoot()) return Optional.of("needs root (uid 0) to create network namespaces");
        return Stream.concat(Stream.of("ip", "nft"), Stream.of(alsoNeeded)).filter(cmd -> executable(cmd).isEmpty())
                .findFirst().map(cmd -> "the " + cmd + " command is not installed");
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
        if (!tag.matches("[a-z0-9]{1,8}")) throw new IllegalArgumentException("tag must be 1-8 of [a-z0-9]: " + tag);
        if (!suffix.matches("[a-z0-9][a-z0-9-]{0,31}")) throw new IllegalArgumentException("suffix must be 1-32 of [a-z0-9-]: " + suffix);
        unavailabilityCause().ifPresent(cause -> { throw new IllegalStateException(cause); });
        String name = prefix(tag) + suffix;
        KernelNamespace ns = new KernelNamespace(name, executable("ip").get(), executable("nft").get());
        Result r = run(DEFAULT_TIMEOUT, null, ns.ip, "netns", "add", name);
        if (!r.ok()) throw new IOException("ip netns add " + name + " failed: " + r.stderr().strip());
        return ns;
    }

    /** {@code nftp-<tag>-<pid>-}: what every namespace this process creates with {@code tag} starts with. */
    public static String prefix(String tag) { return "nftp-" + tag + "-" + ProcessHandle.current().pid() + "-"; }

    /** The namespaces this process created with {@code tag} that still exist, by name. */
    public static List<String> existing(String tag) throws IOException {
        String prefix = prefix(tag);
        Result r = run(DEFAULT_TIMEOUT, null, executable("ip").orElseThrow(() -> new IOException("no ip command")), "netns", "list");
        if (!r.ok()) throw new IOException("ip netns list failed: " + r.stderr().strip());
        // "NAME" or "NAME (id: N)", one per line.
        return r.stdout().lines().map(l -> l.split(" ", 2)[0]).filter(n -> n.startsWith(prefix)).sorted().toList();
    }

    /**
     * Deletes what {@link #existing} lists: the sweep after an interrupted run, which may have been stopped between
     * creating a namespace and handing it to whoever deletes it. Returns the names it deleted.
     */
    public static List<String> deleteExisting(String tag) throws IOException {
        List<String> names = existing(tag);
        if (names.isEmpty()) return names;
        String ip = executable("ip").orElseThrow();
        for (String n : names) delete(ip, n);
        return names;
    }

    public String name() { return name; }

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

    /** Deletes the namespace. Idempotent. */
    @Override public void close() throws IOException {
        if (closed) return;
        closed = true;
        delete(ip, name);
    }

    private static void delete(String ip, String name) throws IOException {
        Result r = run(DEFAULT_TIMEOUT, null, ip, "netns", "del", name);
        if (!r.ok()) throw new IOException("ip netns del " + name + " failed: " + r.stderr().strip());
    }

    @Override public String toString() { return name; }

    /**
     * Runs a process with stdin/stdout/stderr through temporary files (no pipe can fill up and deadlock), killing it
     * if it outlives the timeout.
     */
    public static Result run(Duration timeout, String stdin, String... argv) throws IOException {
        Path in = null, out = Files.createTempFile("nftp-out", ".txt"), err = Files.createTempFile("nftp-err", ".txt");
        try {
            ProcessBuilder pb = new ProcessBuilder(argv).redirectOutput(out.toFile()).redirectError(err.toFile());
            if (stdin != null) {
                in = Files.createTempFile("nftp-in", ".txt");
                Files.writeString(in, stdin, StandardCharsets.UTF_8);
                pb.redirectInput(in.toFile());
            } else {
                pb.redirectInput(new File("/dev/null"));
            }
            Process p = pb.start();
            boolean done;
            try {
                done = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while running " + String.join(" ", argv), e);
            }
            if (!done) {
                p.destroyForcibly();
                throw new IOException("timed out after " + timeout + ": " + String.join(" ", argv));
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
            if (in != null) Files.deleteIfExists(in);
        }
    }

    /** Runs a command where this process is (no shell) and returns its stdout; throws with its stderr unless it exits 0. */
    public static String runChecked(String... argv) throws IOException {
        Result r = run(DEFAULT_TIMEOUT, null, argv);
        if (!r.ok()) throw new IOException(String.join(" ", argv) + " failed (exit " + r.exitCode() + "): " + r.stderr().strip());
        return r.stdout();
    }

    /** Whether this process runs with effective uid 0. */
    public static boolean isRoot() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) return line.split("\\s+")[2].equals("0"); // effective uid
            }
        } catch (IOException | RuntimeException e) {
            return false;
        }
        return false;
    }

    /** The absolute path of {@code cmd}, looked up in PATH and the sbin directories root's PATH may lack. */
    public static Optional<String> executable(String cmd) {
        String path = System.getenv("PATH");
        return Stream.concat(path == null ? Stream.empty() : Stream.of(path.split(File.pathSeparator)), SBIN.stream())
                .filter(d -> !d.isEmpty()).map(d -> Path.of(d, cmd))
                .filter(p -> Files.isRegularFile(p) && Files.isExecutable(p)).map(Path::toString).findFirst();
    }
}
