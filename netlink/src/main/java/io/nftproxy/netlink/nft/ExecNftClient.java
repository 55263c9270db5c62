package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongConsumer;
import java.util.stream.Stream;

/**
 * {@link NftClient} that runs the {@code nft} binary: {@code nft -f -} with the script on stdin. The fallback
 * when libnftables cannot be loaded, and the safer choice if a libnftables bug could crash the JVM. No shell is
 * involved: the command is an argument vector.
 *
 * <p>A command prefix puts {@code nft} behind another program, e.g. {@code ip netns exec NAME nft} for tests.
 * Each call is bounded by the timeout; a process that overruns is killed and the call fails with kind FAILED.
 * Stateless apart from the cached capabilities, so safe to share between threads.
 */
public final class ExecNftClient implements NftClient {
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
    private static final long DRAIN_MILLIS = 2_000;

    /** Pumps stdin, stdout and stderr of the child; daemon threads, created on demand and reaped when idle. */
    private static final ExecutorService PUMPS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "nft-exec-pump");
        t.setDaemon(true);
        return t;
    });

    private final List<String> nft;
    private final Duration timeout;
    private final LongConsumer childStarted;
    private volatile Capabilities capabilities;

    /**
     * @param nft          the argument vector that runs nft, e.g. {@code [nft]} or {@code [ip, netns, exec, NS, nft]}
     * @param childStarted told each child's PID after it started and before it is given its script, so before it
     *                     can commit anything; for telling our commits from others' in the change monitor
     *                     ({@code OwnProcesses::registerChild}). {@code ip netns exec} execs nft in place, so the PID
     *                     is nft's.
     */
    public ExecNftClient(List<String> nft, Duration timeout, LongConsumer childStarted) {
        if (nft.isEmpty()) throw new IllegalArgumentException("empty nft command");
        if (timeout.isNegative() || timeout.isZero()) throw new IllegalArgumentException("timeout " + timeout);
        this.nft = List.copyOf(nft);
        this.timeout = timeout;
        this.childStarted = java.util.Objects.requireNonNull(childStarted, "childStarted");
    }

    /** {@code nft} in {@code netns}: {@code ip netns exec NAME nft} for a named network namespace. */
    public static ExecNftClient inNamespace(NetworkNamespace netns, Duration timeout) {
        return inNamespace(netns, timeout, pid -> {});
    }

    /** As {@link #inNamespace(NetworkNamespace, Duration)}, reporting each nft child's pid (the change monitor's "own" test). */
    public static ExecNftClient inNamespace(NetworkNamespace netns, Duration timeout, LongConsumer childStarted) {
        return new ExecNftClient(List.of(netns.command("nft")), timeout, childStarted);
    }

    @Override public void apply(Transaction tx) {
        if (tx.isEmpty()) return;
        String context = "apply " + tx.size() + " commands to " + tx.family().nftFamily() + " " + TableContent.TABLE_NAME;
        run(tx.script(capabilities()), context, "-f", "-");
    }

    @Override public String listTableJson(IpFamily family) {
        return NftException.nullIfNotFound(() -> run(null, "list table", "-j", "list", "table", family.nftFamily(), TableContent.TABLE_NAME));
    }

    @Override public Capabilities capabilities() {
        if (capabilities == null) capabilities = CapabilitiesProbe.probe(this);
        return capabilities;
    }

    /** Runs a raw script with {@code nft -f -}; for probes and tests, not for table changes. */
    public String run(String script) { return run(script, "run nft script", "-f", "-"); }

    /** Validates a raw script with {@code nft -c -f -}; nothing is committed. */
    public void check(String script) { run(script, "check nft script", "-c", "-f", "-"); }

    /** The version from {@code nft --version} ({@code nftables v1.0.6 (Lester Gooch #5)} gives {@code 1.0.6}). */
    public String version() {
        String out = run(null, "nft --version", "--version").strip();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("v(\\d[^\\s]*)").matcher(out);
        return m.find() ? m.group(1) : out;
    }

    @Override public String describe() {
        Capabilities c = capabilities;
        return "nft subprocess (" + String.join(" ", nft) + (c == null ? "" : ", nft " + c.nftVersion()) + ")";
    }

    /**
     * Runs nft with {@code args}, feeding {@code stdin} if non-null, and returns stdout. A non-zero exit becomes an
     * NftException classified from stderr.
     */
    private String run(String stdin, String context, String... args) {
        List<String> argv = Stream.concat(nft.stream(), Stream.of(args)).toList();
        ProcessBuilder pb = new ProcessBuilder(argv);
        if (stdin == null) pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw NftException.failed(context + ": could not run " + argv.get(0) + ": " + e.getMessage(), e);
        }
        try {
            childStarted.accept(p.pid());
        } catch (RuntimeException e) {
            p.destroyForcibly();
            throw e;
        }
        CompletableFuture<Void> in = stdin == null ? CompletableFuture.completedFuture(null)
                : CompletableFuture.runAsync(() -> write(p.getOutputStream(), stdin), PUMPS);
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()), PUMPS);
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()), PUMPS);
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw NftException.failed(context + ": " + argv.get(0) + " did not finish within " + timeout);
            }
            String stderr = err.get(DRAIN_MILLIS, TimeUnit.MILLISECONDS);
            String stdout = out.get(DRAIN_MILLIS, TimeUnit.MILLISECONDS);
            in.get(DRAIN_MILLIS, TimeUnit.MILLISECONDS);
            if (p.exitValue() != 0) {
                throw NftException.fromErrorText(context, stderr.isBlank() ? "exit status " + p.exitValue() : stderr);
            }
            return stdout;
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw NftException.failed(context + ": interrupted", e);
        } catch (ExecutionException | TimeoutException e) {
            p.destroyForcibly();
            throw NftException.failed(context + ": could not talk to " + argv.get(0), e);
        }
    }

    private static void write(OutputStream os, String s) {
        try (os) {
            os.write(s.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // nft exited before reading all of stdin; its exit status and stderr say why.
        }
    }

    private static String read(InputStream is) {
        try (is) {
            return new String(is.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
