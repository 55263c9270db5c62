package io.nftproxy.it.launcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The checkout's launcher with a real JVM: the first {@code run} of a jar writes a class-data archive when it exits,
 * the next one maps it ({@code -Xshare:on} makes the JVM refuse to start if it cannot), and stdout stays the
 * command's own. {@code run --help} is a {@code run} that needs no root and exits at once.
 */
class LauncherClassDataSharingTest {
    private static final Path LAUNCHER = Path.of("..", "nftproxy").toAbsolutePath().normalize();

    private record Run(int exit, String stdout, String stderr) {}

    private static Run run(Map<String, String> env) throws IOException, InterruptedException {
        return run(env, "run", "--help");
    }

    private static Run run(Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> argv = new java.util.ArrayList<>(List.of(LAUNCHER.toString()));
        argv.addAll(List.of(args));
        return runArgv(env, argv);
    }

    /** {@code argv} as given: the launcher behind a wrapper. */
    private static Run runArgv(Map<String, String> env, List<String> argv) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.environment().remove("NFTPROXY_NO_CDS");
        pb.environment().remove("NFTPROXY_JAVA_OPTS");
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        var err = p.getErrorStream();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String errText = new String(err.readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), "the launcher did not exit");
        return new Run(p.exitValue(), out, errText);
    }

    private static List<Path> archives(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) return List.of();
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".jsa")).toList();
        }
    }

    @Test
    void theSecondRunMapsTheArchiveTheFirstWrote(@TempDir Path tmp) throws Exception {
        Path cds = tmp.resolve("cds");
        Run first = run(Map.of("NFTPROXY_CDS_DIR", cds.toString()));
        assertEquals(0, first.exit(), first.stderr());
        assertTrue(first.stdout().startsWith("Usage: nftproxy run"), "stdout is the help, nothing else:\n" + first.stdout());
        assertEquals(1, archives(cds).size(), "one archive written at exit: " + archives(cds) + "\n" + first.stderr());

        Run second = run(Map.of("NFTPROXY_CDS_DIR", cds.toString(), "NFTPROXY_JAVA_OPTS", "-Xshare:on"));
        assertEquals(0, second.exit(), "the archive maps (-Xshare:on fails otherwise): " + second.stderr());
        assertTrue(second.stdout().startsWith("Usage: nftproxy run"), second.stdout());
        assertEquals(archives(cds), archives(cds), "nothing rewritten");
    }

    /**
     * kube-proxy's shape (flags, no command) is the daemon too, and gets its archive; the top level's own
     * {@code --version} is not, and writes none.
     */
    @Test
    void kubeProxysShapeIsARunAndTheVersionIsNot(@TempDir Path tmp) throws Exception {
        Path cds = tmp.resolve("cds");
        Run version = run(Map.of("NFTPROXY_CDS_DIR", cds.toString()), "--version");
        assertEquals(0, version.exit(), version.stderr());
        assertTrue(version.stdout().startsWith("nftproxy "), version.stdout());
        assertEquals(List.of(), archives(cds), "no archive for --version");

        Run shaped = run(Map.of("NFTPROXY_CDS_DIR", cds.toString()), "--hostname-override=node-1", "--help");
        assertEquals(0, shaped.exit(), shaped.stderr());
        assertTrue(shaped.stdout().startsWith("Usage: nftproxy run"), "flags with no command are run's:\n" + shaped.stdout());
        assertEquals(1, archives(cds).size(), "the daemon's archive: " + shaped.stderr());
    }

    /**
     * The cache directory full (a 1 MiB tmpfs, in a mount namespace of the launcher's own) or read-only: the command
     * runs and exits with its own status, no archive is written, nothing is left behind. A JVM asked to write an
     * archive that does not fit exits with status 1 at the end of a successful run.
     */
    @Test
    void aFullOrReadOnlyCacheDirectoryCostsTheArchiveNotTheExitStatus(@TempDir Path tmp) throws Exception {
        io.nftproxy.netlink.KernelTests.skipIfMissing(io.nftproxy.netlink.KernelTests.causeIf(!io.nftproxy.netlink.KernelNamespace.isRoot(), "mounting a tmpfs needs root"));
        for (String options : List.of("size=1m", "ro")) {
            Path mnt = Files.createDirectories(tmp.resolve(options.replace('=', '-')));
            Path cds = mnt.resolve("cds");
            Run r = runArgv(Map.of("NFTPROXY_CDS_DIR", cds.toString()), List.of("unshare", "--mount", "--propagation", "private", "sh", "-c",
                    "mount -t tmpfs -o " + options + " tmpfs \"$1\" && mkdir -p \"$2\" 2>/dev/null; shift 2; exec \"$@\"", "sh",
                    mnt.toString(), cds.toString(), LAUNCHER.toString(), "run", "--help"));
            assertEquals(0, r.exit(), "cache directory on a tmpfs mounted " + options + ": " + r.stderr());
            assertTrue(r.stdout().startsWith("Usage: nftproxy run"), r.stdout());
            assertFalse(r.stderr().contains("shared archive"), r.stderr());
        }
    }
}
