package io.nftproxy.it.release;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The release tarball as an operator meets it: unpacked, it runs {@code --version} and renders the example
 * manifests with its own Java runtime while no Java is on PATH and JAVA_HOME is unset; its install.sh installs into
 * a staging root a tree that runs the same way, and uninstalls back to nothing.
 */
class ReleaseTarballTest {
    private static final Path EXAMPLES = Path.of("..", "examples").toAbsolutePath().normalize();

    @TempDir
    Path tmp;

    private Map<String, String> noJava() throws Exception {
        return Map.of("PATH", ReleaseTarball.pathWithoutJava(tmp.resolve("path")), "LANG", "C.UTF-8");
    }

    /** The same render by the jar on the JVM running this test, to compare with. */
    private static String renderWithTestJvm(Path jar) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ReleaseTarball.Run r = ReleaseTarball.run(List.of(java, "-jar", jar.toString(), "render", "--manifests",
                EXAMPLES.toString(), "--hostname-override", "k8s-node-1"), Map.of(), EXAMPLES, 120);
        assertEquals(0, r.exit(), r.toString());
        return r.stdout();
    }

    @Test
    void unpackedReleaseRunsWithItsOwnRuntimeAndNoJavaOnPath() throws Exception {
        Path tarball = ReleaseTarball.find();
        Path release = ReleaseTarball.unpack(tarball, Files.createDirectory(tmp.resolve("unpacked")));
        for (String file : List.of("bin/nftproxy", "install.sh", "README.md", "lib/nftproxy/nftproxy.jar",
                "lib/nftproxy/nftproxy-jvm.sh", "lib/nftproxy/runtime/bin/java", "share/nftproxy/nftproxy.service",
                "share/nftproxy/nftproxy-modules.conf", "share/nftproxy/config.yaml")) {
            assertTrue(Files.isRegularFile(release.resolve(file)), "missing in the tarball: " + file);
        }
        assertTrue(Files.getPosixFilePermissions(release.resolve("bin/nftproxy")).contains(PosixFilePermission.OTHERS_EXECUTE));
        // The runtime is jlink's, with the listed modules only: no compiler, no jmods, far smaller than a JDK.
        String modules = Files.readString(release.resolve("lib/nftproxy/runtime/release"));
        assertTrue(modules.contains("java.net.http") && modules.contains("jdk.crypto.ec"), modules);
        assertFalse(modules.contains("jdk.compiler") || Files.exists(release.resolve("lib/nftproxy/runtime/jmods")), modules);

        Map<String, String> env = noJava();
        String version = tarball.getFileName().toString().replaceFirst("^nftproxy-(.+)-linux-.*$", "$1");
        ReleaseTarball.Run v = ReleaseTarball.run(List.of(release.resolve("bin/nftproxy").toString(), "--version"),
                env, tmp, 60);
        assertEquals(0, v.exit(), v.toString());
        assertTrue(v.stdout().startsWith("nftproxy " + version + " (commit "), v.stdout());

        ReleaseTarball.Run render = ReleaseTarball.run(List.of(release.resolve("bin/nftproxy").toString(), "render",
                "--manifests", EXAMPLES.toString(), "--hostname-override", "k8s-node-1"), env, tmp, 120);
        assertEquals(0, render.exit(), render.toString());
        assertTrue(render.stdout().startsWith("add table ip kube-proxy"), render.stdout());
        assertEquals(renderWithTestJvm(release.resolve("lib/nftproxy/nftproxy.jar")), render.stdout(),
                "the bundled runtime renders what a full JDK renders");
    }

    @Test
    void installShFromTheTarballInstallsARunnableTreeAndRemovesIt() throws Exception {
        Path release = ReleaseTarball.unpack(ReleaseTarball.find(), Files.createDirectory(tmp.resolve("unpacked")));
        Path root = Files.createDirectory(tmp.resolve("root"));
        Map<String, String> env = noJava();

        ReleaseTarball.Run installed = ReleaseTarball.run(List.of(release.resolve("install.sh").toString(),
                "--prefix", root.toString()), env, tmp, 300);
        assertEquals(0, installed.exit(), installed.toString());
        Path lib = root.resolve("usr/local/lib/nftproxy");
        for (String file : List.of("usr/local/bin/nftproxy", "etc/systemd/system/nftproxy.service",
                "etc/modules-load.d/nftproxy.conf", "etc/nftproxy/config.yaml", "usr/local/lib/nftproxy/nftproxy.jar",
                "usr/local/lib/nftproxy/runtime/bin/java")) {
            assertTrue(Files.isRegularFile(root.resolve(file)), "not installed: " + file);
        }
        assertEquals(Files.readString(release.resolve("share/nftproxy/config.yaml")),
                Files.readString(root.resolve("etc/nftproxy/config.yaml")), "the template, as shipped");
        // Made by install.sh, so that the daemon's own class-data archive has a base to extend.
        assertTrue(Files.isRegularFile(lib.resolve("runtime/lib/server/classes.jsa")), installed.toString());

        ReleaseTarball.Run v = ReleaseTarball.run(List.of(root.resolve("usr/local/bin/nftproxy").toString(),
                "--version"), env, tmp, 60);
        assertEquals(0, v.exit(), v.toString());
        assertTrue(v.stdout().startsWith("nftproxy "), v.stdout());
        // The shipped template is a configuration the daemon accepts as it is.
        // --init-only writes conntrack sysctls: only ever in a namespace of this test's.
        KernelTests.assumeAvailable();
        try (KernelNamespace ns = KernelNamespace.create("reltpl")) {
            ReleaseTarball.Run check = ReleaseTarball.run(List.of(KernelNamespace.executable("ip").orElseThrow(), "netns", "exec",
                    ns.name(), root.resolve("usr/local/bin/nftproxy").toString(),
                    "run", "--config", root.resolve("etc/nftproxy/config.yaml").toString(), "--init-only"), env, tmp, 60);
            assertEquals(0, check.exit(), check.toString());
        }

        // A changed configuration survives a reinstall and an uninstall; everything else goes.
        Files.writeString(root.resolve("etc/nftproxy/config.yaml"), "\n# edited\n", java.nio.file.StandardOpenOption.APPEND);
        ReleaseTarball.Run again = ReleaseTarball.run(List.of(release.resolve("install.sh").toString(),
                "--prefix", root.toString()), env, tmp, 300);
        assertEquals(0, again.exit(), again.toString());
        assertTrue(Files.readString(root.resolve("etc/nftproxy/config.yaml")).endsWith("# edited\n"), "never overwritten");
        ReleaseTarball.Run removed = ReleaseTarball.run(List.of(release.resolve("install.sh").toString(),
                "--uninstall", "--prefix", root.toString()), env, tmp, 120);
        assertEquals(0, removed.exit(), removed.toString());
        try (Stream<Path> s = Files.walk(root)) {
            assertEquals(List.of("etc", "etc/nftproxy", "etc/nftproxy/config.yaml"),
                    s.filter(p -> !p.equals(root)).map(p -> root.relativize(p).toString()).sorted().toList());
        }
    }
}
