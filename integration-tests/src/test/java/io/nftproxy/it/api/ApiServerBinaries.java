package io.nftproxy.it.api;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The kube-apiserver and etcd binaries that {@code integration-tests/apiserver/build.sh} compiles from the Go module
 * proxy into {@code ${NFTPROXY_TEST_CACHE:-~/.cache/nftproxy}/k8s-<version>/bin}. No registry this project can reach
 * ships a kube-apiserver binary, so the build is the only way to get one; it takes tens of minutes, which is why it
 * only runs when asked ({@code NFTPROXY_BUILD_APISERVER=1}) or has already run.
 */
public final class ApiServerBinaries {
    /** The release the tests run against; kube-proxy 1.36 is what the renderer matches. Keep in step with build.sh. */
    public static final String K8S_VERSION = "v1.36.3";
    /** Set (to anything) to let tests build missing binaries instead of skipping. */
    public static final String BUILD_ENV = "NFTPROXY_BUILD_APISERVER";
    /** A cold build measured 20-40 min on 2 shared cores; the cap only stops a hung build from hanging CI forever. */
    private static final long BUILD_TIMEOUT_MINUTES = 75;

    private final Path binDir;

    private ApiServerBinaries(Path binDir) { this.binDir = binDir; }

    public Path kubeApiServer() { return binDir.resolve("kube-apiserver"); }

    public Path etcd() { return binDir.resolve("etcd"); }

    public static Path cacheRoot() {
        String env = System.getenv("NFTPROXY_TEST_CACHE");
        if (env != null && !env.isBlank()) return Path.of(env);
        return Path.of(System.getProperty("user.home"), ".cache", "nftproxy");
    }

    public static Path binDir() { return cacheRoot().resolve("k8s-" + K8S_VERSION).resolve("bin"); }

    /**
     * Why a real API server cannot run here, or empty when it can (binaries cached, or a build was asked for and the
     * tools it needs exist). A build that was asked for and then fails is a test failure, not a skip.
     */
    public static Optional<String> unavailabilityCause() {
        if (!Files.isExecutable(Path.of("/usr/bin/openssl")) && !onPath("openssl")) {
            return Optional.of("openssl is not installed (it generates the API server's certificates)");
        }
        if (cached()) return Optional.empty();
        if (System.getenv(BUILD_ENV) == null) {
            return Optional.of("no kube-apiserver/etcd " + K8S_VERSION + " in " + binDir()
                    + "; run integration-tests/apiserver/build.sh or set " + BUILD_ENV + "=1 to build them (20-40 min)");
        }
        if (!Files.isExecutable(Path.of("/usr/local/go/bin/go")) && !onPath("go")) {
            return Optional.of(BUILD_ENV + " is set but there is no Go toolchain (go on PATH or /usr/local/go/bin)");
        }
        return Optional.empty();
    }

    /** The cached binaries, building them first when they are missing. */
    public static ApiServerBinaries locateOrBuild() throws IOException {
        if (!cached()) build();
        if (!cached()) throw new IOException("build.sh finished but " + binDir() + " lacks kube-apiserver or etcd");
        return new ApiServerBinaries(binDir());
    }

    private static boolean cached() {
        return Files.isExecutable(binDir().resolve("kube-apiserver")) && Files.isExecutable(binDir().resolve("etcd"));
    }

    private static void build() throws IOException {
        Path script = buildScript();
        List<String> cmd = new ArrayList<>(List.of("bash", script.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("K8S_VERSION", K8S_VERSION);
        Process p = pb.start();
        // Through System.out, not an inherited fd: surefire's forked JVM reports "Corrupted channel" for bytes
        // written straight to its stdout, and the build's progress would never reach the console.
        Thread pump = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) System.out.println(line);
            } catch (IOException closed) {
                // the process was killed; its exit code says what happened
            }
        }, "apiserver-build-output");
        pump.setDaemon(true);
        pump.start();
        try {
            if (!p.waitFor(BUILD_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IOException(script + " did not finish in " + BUILD_TIMEOUT_MINUTES + " min");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while building kube-apiserver", e);
        }
        try {
            pump.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (p.exitValue() != 0) throw new IOException(script + " failed with exit code " + p.exitValue() + " (its log is above)");
    }

    private static Path buildScript() throws IOException {
        // Surefire runs in the module directory and sets basedir; a run from the repository root has neither.
        String basedir = System.getProperty("basedir", System.getProperty("user.dir"));
        for (Path candidate : List.of(Path.of(basedir, "apiserver", "build.sh"),
                Path.of(basedir, "integration-tests", "apiserver", "build.sh"))) {
            if (Files.isRegularFile(candidate)) return candidate;
        }
        throw new IOException("integration-tests/apiserver/build.sh not found from " + basedir);
    }

    private static boolean onPath(String cmd) {
        String path = System.getenv("PATH");
        if (path == null) return false;
        for (String dir : path.split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, cmd))) return true;
        }
        return false;
    }
}
