package io.nftproxy.netlink;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Runs the node's command-line tools ({@code ip}, {@code iptables-save}, {@code ipvsadm}, ...) with a bound on their
 * time, and finds them. Where they run is {@link NetworkNamespace#exec}'s business; this class only runs argument
 * vectors (no shell).
 */
public final class Commands {
    private static final List<String> SBIN = List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin");

    private Commands() {}

    /** The result of one command. */
    public record Result(int exitCode, String stdout, String stderr) {
        public boolean ok() { return exitCode == 0; }
    }

    /**
     * Runs a process with stdin/stdout/stderr through temporary files (no pipe can fill up and deadlock), killing it
     * if it outlives the timeout; {@code stdin} null gives it {@code /dev/null}.
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
