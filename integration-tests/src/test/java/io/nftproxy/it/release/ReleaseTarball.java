package io.nftproxy.it.release;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The release tarball the release module's package phase built, unpacked the way an operator does it, and commands
 * run from it in an environment where no Java can be found: PATH holds only links to the few tools the launcher and
 * install.sh use, and JAVA_HOME is unset.
 */
public final class ReleaseTarball {
    public static final Path TARGET = Path.of("..", "release", "target").toAbsolutePath().normalize();
    /** What bin/nftproxy and install.sh call; none of them is a JVM. */
    private static final List<String> TOOLS = List.of("sh", "bash", "readlink", "dirname", "stat", "mkdir", "rm",
            "cat", "sed", "grep", "ls", "install", "cp", "cmp", "rmdir", "printf", "chmod", "pwd");

    public record Run(int exit, String stdout, String stderr) {
        @Override public String toString() { return "exit " + exit + "\nstdout:\n" + stdout + "\nstderr:\n" + stderr; }
    }

    private ReleaseTarball() {}

    /** The one nftproxy-*-linux-*.tar.gz in release/target; the build must have made it. */
    public static Path find() throws IOException {
        if (!Files.isDirectory(TARGET)) fail("no " + TARGET + ": build the release first (./mvnw package -pl release -am)");
        try (Stream<Path> s = Files.list(TARGET)) {
            List<Path> found = s.filter(p -> p.getFileName().toString().matches("nftproxy-.+-linux-[a-z0-9_]+\\.tar\\.gz"))
                    .toList();
            assertEquals(1, found.size(), "one release tarball in " + TARGET + ": " + found);
            return found.get(0);
        }
    }

    /** Unpacks {@code tarball} into {@code into}; returns the one top-level directory, named as the tarball. */
    public static Path unpack(Path tarball, Path into) throws Exception {
        Run tar = run(List.of(which("tar").toString(), "-xzf", tarball.toString(), "-C", into.toString()), Map.of(), Path.of("."), 120);
        assertEquals(0, tar.exit(), tar.toString());
        String name = tarball.getFileName().toString().replaceFirst("\\.tar\\.gz$", "");
        try (Stream<Path> s = Files.list(into)) {
            assertEquals(List.of(into.resolve(name)), s.toList(), "the tarball holds one directory named as itself");
        }
        return into.resolve(name);
    }

    /** A PATH of links to {@link #TOOLS} only, in {@code dir}, checked to find no java. */
    static String pathWithoutJava(Path dir) throws Exception {
        Files.createDirectories(dir);
        for (String tool : TOOLS) {
            Path real = which(tool);
            // A script, not a link: JUnit warns about every link it deletes with the temporary directory.
            if (real != null) {
                Path wrapper = Files.writeString(dir.resolve(tool), "#!/bin/sh\nexec " + real + " \"$@\"\n");
                wrapper.toFile().setExecutable(true);
            }
        }
        String path = dir.toString();
        Run probe = run(List.of(dir.resolve("sh").toString(), "-c", "command -v java"), Map.of("PATH", path), dir, 10);
        assertTrue(probe.exit() != 0 && probe.stdout().isBlank(), "java must not be on the test's PATH: " + probe);
        return path;
    }

    private static Path which(String tool) {
        for (String d : List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin")) {
            Path p = Path.of(d, tool);
            if (Files.isExecutable(p)) return p;
        }
        return null;
    }

    /** Runs {@code argv} with exactly {@code env} (nothing inherited: no JAVA_HOME), in {@code dir}. */
    public static Run run(List<String> argv, Map<String, String> env, Path dir, int timeoutSeconds) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(new ArrayList<>(argv)).directory(dir.toFile());
        Map<String, String> e = pb.environment();
        Map<String, String> keep = new HashMap<>(env);
        e.clear();
        e.putAll(keep);
        Path err = Files.createTempFile("release-run", ".err");
        try {
            pb.redirectError(err.toFile());
            Process p = pb.start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail("timed out after " + timeoutSeconds + " s: " + argv);
            }
            return new Run(p.exitValue(), out, Files.readString(err));
        } finally {
            Files.deleteIfExists(err);
        }
    }
}
