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

    /** Lines of {@code stderr} saying that the daemon starts without class-data sharing. */
    private static List<String> withoutCds(String stderr) {
        return stderr.lines().filter(l -> l.startsWith("nftproxy: starting without class-data sharing")).toList();
    }

    private static List<Path> archives(Path dir) throws Exception {
        if (!Files.isDirectory(dir)) return List.of();
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".jsa")).toList();
        }
    }

    /**
     * {@code run} from the unpacked tarball, as shipped: the runtime's base class-data archive (made by jlink) lets the
     * first run write the daemon's own archive and the next map it; without a cache directory it can write, or without
     * a base archive (the tarball before jlink made one: "DynamicDumpSharedSpaces is unsupported when base CDS archive
     * is not loaded"), it still starts, without class-data sharing, and says so in one line.
     */
    @Test
    void unpackedRunStartsWithOrWithoutClassDataSharing() throws Exception {
        Path release = ReleaseTarball.unpack(ReleaseTarball.find(), Files.createDirectory(tmp.resolve("unpacked")));
        String nftproxy = release.resolve("bin/nftproxy").toString();
        Path runtime = release.resolve("lib/nftproxy/runtime");
        assertTrue(Files.isRegularFile(runtime.resolve("lib/server/classes.jsa")), "jlink's base archive is shipped");
        Path home = tmp.resolve("home");
        Path cds = home.resolve(".cache/nftproxy/cds");
        Map<String, String> env = new java.util.HashMap<>(noJava());
        env.put("HOME", home.toString());

        ReleaseTarball.Run first = ReleaseTarball.run(List.of(nftproxy, "run", "--help"), env, tmp, 120);
        assertEquals(0, first.exit(), first.toString());
        assertTrue(first.stdout().startsWith("Usage: nftproxy run"), first.toString());
        assertEquals(List.of(), withoutCds(first.stderr()), first.toString());
        assertEquals(1, archives(cds).size(), "the daemon's archive, written at exit: " + first);
        env.put("NFTPROXY_JAVA_OPTS", "-Xshare:on");   // the JVM refuses to start if it cannot map the archive
        ReleaseTarball.Run mapped = ReleaseTarball.run(List.of(nftproxy, "run", "--help"), env, tmp, 120);
        assertEquals(0, mapped.exit(), "the archive maps: " + mapped);
        env.remove("NFTPROXY_JAVA_OPTS");

        // No HOME (a bare environment): no cache directory, and none made anywhere.
        ReleaseTarball.Run homeless = ReleaseTarball.run(List.of(nftproxy, "run", "--help"), noJava(), tmp, 120);
        assertEquals(0, homeless.exit(), homeless.toString());
        assertTrue(homeless.stdout().startsWith("Usage: nftproxy run"), homeless.toString());
        assertEquals(1, withoutCds(homeless.stderr()).size(), homeless.toString());
        assertTrue(withoutCds(homeless.stderr()).get(0).contains("no cache directory"), homeless.toString());
        // A cache directory that cannot be made (a file is in the way; root may write anywhere else).
        Map<String, String> blocked = new java.util.HashMap<>(noJava());
        blocked.put("NFTPROXY_CDS_DIR", Files.writeString(tmp.resolve("a-file"), "").resolve("cds").toString());
        ReleaseTarball.Run unwritable = ReleaseTarball.run(List.of(nftproxy, "run", "--help"), blocked, tmp, 120);
        assertEquals(0, unwritable.exit(), unwritable.toString());
        assertTrue(unwritable.stdout().startsWith("Usage: nftproxy run"), unwritable.toString());
        assertEquals(1, withoutCds(unwritable.stderr()).size(), unwritable.toString());
        assertTrue(withoutCds(unwritable.stderr()).get(0).contains("cannot write " + blocked.get("NFTPROXY_CDS_DIR")),
                unwritable.toString());

        // A runtime without a base archive, as the tarball used to ship and as an image made from one without it.
        Files.delete(runtime.resolve("lib/server/classes.jsa"));
        Files.deleteIfExists(runtime.resolve("lib/server/classes_nocoops.jsa"));
        for (Path old : archives(cds)) Files.delete(old);
        ReleaseTarball.Run baseless = ReleaseTarball.run(List.of(nftproxy, "run", "--help"), env, tmp, 120);
        assertEquals(0, baseless.exit(), baseless.toString());
        assertTrue(baseless.stdout().startsWith("Usage: nftproxy run"), baseless.toString());
        assertEquals(1, withoutCds(baseless.stderr()).size(), baseless.toString());
        assertTrue(withoutCds(baseless.stderr()).get(0).contains("has no base archive"), baseless.toString());
        assertEquals(List.of(), archives(cds), "nothing written without a base");
        env.put("NFTPROXY_NO_CDS", "1");
        ReleaseTarball.Run off = ReleaseTarball.run(List.of(nftproxy, "run", "--help"), env, tmp, 120);
        assertEquals(0, off.exit(), off.toString());
        assertEquals(List.of(), withoutCds(off.stderr()), "NFTPROXY_NO_CDS=1 says nothing: " + off);
    }

    /**
     * The daemon itself from the unpacked tarball, no Java on PATH: {@code run --once} on the example manifests
     * programs both tables of a throwaway namespace (libnftables in-process, or nft where it is installed).
     */
    @Test
    void unpackedRunProgramsANamespaceWithNoJavaOnPath() throws Exception {
        KernelTests.assumeAvailable();
        Path release = ReleaseTarball.unpack(ReleaseTarball.find(), Files.createDirectory(tmp.resolve("unpacked")));
        Map<String, String> env = new java.util.HashMap<>(noJava());
        env.put("HOME", tmp.resolve("home").toString());
        try (KernelNamespace ns = KernelNamespace.create("relrun")) {
            ReleaseTarball.Run once = ReleaseTarball.run(List.of(KernelNamespace.executable("ip").orElseThrow(), "netns", "exec",
                    ns.name(), release.resolve("bin/nftproxy").toString(), "run", "--once", "--manifests", EXAMPLES.toString(),
                    "--hostname-override", "k8s-node-1"), env, tmp, 180);
            assertEquals(0, once.exit(), once.toString());
            assertTrue(once.stdout().contains("applied table ip kube-proxy: converge sync"), once.toString());
            assertTrue(once.stdout().contains("applied table ip6 kube-proxy: converge sync"), once.toString());
            String table = ns.listTableText(io.nftproxy.net.IpFamily.IPV4);
            assertTrue(table.contains("service-ips") && table.contains("10.105.101.118"), table);
        }
    }

    @Test
    void theTarballShipsTheDaemonSetManifest() throws Exception {
        Path release = ReleaseTarball.unpack(ReleaseTarball.find(), Files.createDirectory(tmp.resolve("unpacked")));
        assertEquals(Files.readString(ReleaseManifest.SOURCE), Files.readString(release.resolve("deploy/nftproxy.yaml")),
                "deploy/nftproxy.yaml in the tarball is release/deploy/nftproxy.yaml");
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
