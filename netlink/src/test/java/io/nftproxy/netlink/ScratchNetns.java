package io.nftproxy.netlink;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A throwaway network namespace named {@code nftp-nl-<pid>-<n>}, deleted on close. Tests change only namespaces
 * made here; the host namespace is only ever read.
 */
public final class ScratchNetns implements AutoCloseable {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final long COMMAND_TIMEOUT_SECONDS = 20;

    private final String name;

    private ScratchNetns(String name) { this.name = name; }

    public static ScratchNetns create() throws IOException {
        String name = "nftp-nl-" + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet();
        run("ip", "netns", "add", name);
        return new ScratchNetns(name);
    }

    public String name() { return name; }

    /** Runs {@code ip -n NAME args...}. */
    public String ip(String... args) throws IOException {
        List<String> argv = new ArrayList<>(List.of("ip", "-n", name));
        argv.addAll(List.of(args));
        return run(argv.toArray(String[]::new));
    }

    /** Runs {@code ip netns exec NAME argv...}. */
    public String exec(String... argv) throws IOException {
        List<String> a = new ArrayList<>(List.of("ip", "netns", "exec", name));
        a.addAll(List.of(argv));
        return run(a.toArray(String[]::new));
    }

    @Override public void close() throws IOException {
        run("ip", "netns", "delete", name);
    }

    /** Runs a command (no shell) with a bounded wait; fails unless it exits 0; returns stdout. */
    public static String run(String... argv) throws IOException {
        Path err = Files.createTempFile("nftp-nl-", ".err");
        try {
            Process p = new ProcessBuilder(argv).redirectError(err.toFile()).start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", argv) + ": timed out");
            }
            if (p.exitValue() != 0) {
                throw new IOException(String.join(" ", argv) + ": exit " + p.exitValue() + ": " + Files.readString(err));
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(String.join(" ", argv) + ": interrupted", e);
        } finally {
            Files.deleteIfExists(err);
        }
    }

    /** Skips the calling test, with the reason printed, unless this is root with {@code ip} and {@code nft}. */
    public static void assumeKernelTests() {
        String reason = kernelTestsUnavailable();
        if (reason != null) System.out.println("SKIPPED kernel test: " + reason);
        Assumptions.assumeTrue(reason == null, reason);
    }

    private static String kernelTestsUnavailable() {
        if (!"root".equals(System.getProperty("user.name"))) return "needs root (network namespaces, nftables)";
        try {
            run("ip", "-V");
            run("nft", "--version");
        } catch (Exception e) {
            return "needs the ip and nft commands: " + e.getMessage();
        }
        return null;
    }
}
