package io.nftproxy.conntrack;

import org.junit.jupiter.api.Assumptions;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A throwaway network namespace {@code nftp-<tag>-<pid>-<n>}, deleted on close. Everything a conntrack test inserts,
 * deletes or sends stays inside namespaces made here; the host namespace is never changed.
 */
final class TestNetns implements AutoCloseable {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final long TIMEOUT_SECONDS = 30;

    private final String name;
    private boolean closed;

    private TestNetns(String name) { this.name = name; }

    static TestNetns create(String tag) throws IOException {
        String name = "nftp-" + tag + "-" + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet();
        run(null, "ip", "netns", "add", name);
        return new TestNetns(name);
    }

    String name() { return name; }

    /** {@code ip -n NAME args...} */
    String ip(String... args) throws IOException {
        List<String> argv = new ArrayList<>(List.of("ip", "-n", name));
        argv.addAll(List.of(args));
        return run(null, argv.toArray(String[]::new));
    }

    /** Runs {@code argv} inside the namespace; fails unless it exits 0; returns stdout. */
    String exec(String... argv) throws IOException { return execWithInput(null, argv); }

    /** Like {@link #exec} with {@code stdin} fed from a temporary file. */
    String execWithInput(String stdin, String... argv) throws IOException {
        List<String> a = new ArrayList<>(List.of("ip", "netns", "exec", name));
        a.addAll(List.of(argv));
        return run(stdin, a.toArray(String[]::new));
    }

    /** {@code conntrack -L} of both families, one entry a line. */
    List<String> conntrackList() throws IOException {
        List<String> out = new ArrayList<>();
        for (String fam : List.of("ipv4", "ipv6")) {
            for (String line : exec("conntrack", "-L", "-f", fam).split("\n")) if (!line.isBlank()) out.add(line.strip());
        }
        return out;
    }

    @Override public void close() throws IOException {
        if (closed) return;
        closed = true;
        run(null, "ip", "netns", "delete", name);
    }

    @Override public String toString() { return name; }

    static String run(String stdin, String... argv) throws IOException {
        Path out = Files.createTempFile("nftp-ct-", ".out");
        Path err = Files.createTempFile("nftp-ct-", ".err");
        Path in = null;
        try {
            ProcessBuilder pb = new ProcessBuilder(argv).redirectOutput(out.toFile()).redirectError(err.toFile());
            if (stdin != null) {
                in = Files.createTempFile("nftp-ct-", ".in");
                Files.writeString(in, stdin);
                pb.redirectInput(in.toFile());
            } else {
                pb.redirectInput(new File("/dev/null"));
            }
            Process p = pb.start();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", argv) + ": timed out");
            }
            if (p.exitValue() != 0) {
                throw new IOException(String.join(" ", argv) + ": exit " + p.exitValue() + ": " + Files.readString(err));
            }
            return Files.readString(out, StandardCharsets.UTF_8);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(String.join(" ", argv) + ": interrupted", e);
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
            if (in != null) Files.deleteIfExists(in);
        }
    }

    /** Skips the calling test, with the reason printed, unless this is root with {@code ip} and {@code conntrack}. */
    static void assumeKernelTests(String... extraCommands) {
        String cause = unavailabilityCause(extraCommands);
        if (cause != null) System.out.println("SKIPPED kernel test: " + cause);
        Assumptions.assumeTrue(cause == null, cause);
    }

    private static String unavailabilityCause(String... extraCommands) {
        if (!"root".equals(System.getProperty("user.name"))) return "needs root (network namespaces, conntrack)";
        List<String[]> probes = new ArrayList<>(List.of(new String[]{"ip", "-V"}, new String[]{"conntrack", "--version"}));
        for (String c : extraCommands) probes.add(new String[]{c, "--version"});
        for (String[] probe : probes) {
            try {
                run(null, probe);
            } catch (IOException e) {
                return "needs the " + probe[0] + " command: " + e.getMessage();
            }
        }
        return null;
    }
}
