package io.nftproxy.it.release;

import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The release's OCI image archive: an image named for the release, holding the tarball's own runtime and jar with
 * the launcher's JVM options, whose entry point is the command the DaemonSet manifest runs; it runs the daemon from
 * its own file system (a chroot with no library of this machine's) in a throwaway namespace, and containerd imports
 * and runs it as a kubelet's would.
 */
class ReleaseImageTest {
    private static final Path EXAMPLES = Path.of("..", "examples").toAbsolutePath().normalize();
    private static final List<String> ENTRYPOINT = ReleaseImage.ENTRYPOINT;

    @TempDir
    Path tmp;

    private static String version(Path tarball) {
        return tarball.getFileName().toString().replaceFirst("^nftproxy-(.+)-linux-[a-z0-9_]+\\.tar\\.gz$", "$1");
    }

    private static String arch(Path tarball) {
        return tarball.getFileName().toString().replaceFirst("^nftproxy-.+-linux-([a-z0-9_]+)\\.tar\\.gz$", "$1");
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asString()));
        return out;
    }

    @Test
    void anOciImageNamedForTheReleaseWhoseEntryPointTheManifestRuns() throws Exception {
        Path tarball = ReleaseTarball.find();
        Path archive = ReleaseImage.find();
        assertEquals(tarball.getFileName().toString().replaceFirst("\\.tar\\.gz$", ".oci.tar"), archive.getFileName().toString());
        ReleaseImage image = ReleaseImage.open(archive, Files.createDirectory(tmp.resolve("oci")));
        assertEquals("{\"imageLayoutVersion\": \"1.0.0\"}", Files.readString(image.dir().resolve("oci-layout")));
        JsonNode entry = image.index().path("manifests").get(0);
        assertEquals("localhost/nftproxy:" + version(tarball), entry.path("annotations").path("io.containerd.image.name").asString());
        assertEquals(version(tarball), entry.path("annotations").path("org.opencontainers.image.ref.name").asString());
        assertEquals(arch(tarball), entry.path("platform").path("architecture").asString());
        assertEquals(arch(tarball), image.config().path("architecture").asString());
        assertEquals("linux", image.config().path("os").asString());
        assertEquals("application/vnd.oci.image.layer.v1.tar+gzip", image.manifest().path("layers").get(0).path("mediaType").asString());
        assertEquals(List.of(image.layerDiffId()), strings(image.config().path("rootfs").path("diff_ids")),
                "the config names the layer's uncompressed digest");

        JsonNode config = image.config().path("config");
        assertEquals(ENTRYPOINT, strings(config.path("Entrypoint")));
        assertEquals(List.of("--help"), strings(config.path("Cmd")));
        JsonNode container = ReleaseManifest.ofKind(ReleaseManifest.documents(ReleaseManifest.read()), "DaemonSet")
                .path("spec").path("template").path("spec").path("containers").get(0);
        assertEquals(ENTRYPOINT, strings(container.path("command")),
                "the manifest's command is the image's entry point (spelt out, to replace kube-proxy's command)");
    }

    @Test
    void theLayerHoldsTheTarballsRuntimeAndJarWithTheLaunchersOptions() throws Exception {
        Path tarball = ReleaseTarball.find();
        Path release = ReleaseTarball.unpack(tarball, Files.createDirectory(tmp.resolve("unpacked")));
        ReleaseImage image = ReleaseImage.open(ReleaseImage.find(), Files.createDirectory(tmp.resolve("oci")));
        Path root = image.unpackLayer(tmp.resolve("root"));
        Path lib = release.resolve("lib/nftproxy");
        assertArrayEquals(Files.readAllBytes(lib.resolve("nftproxy.jar")), Files.readAllBytes(root.resolve("opt/nftproxy/nftproxy.jar")));
        assertEquals(files(lib.resolve("runtime")), files(root.resolve("opt/nftproxy/runtime")), "the tarball's runtime, whole");
        for (String f : List.of("release", "lib/modules", "lib/server/classes.jsa")) {
            assertArrayEquals(Files.readAllBytes(lib.resolve("runtime").resolve(f)),
                    Files.readAllBytes(root.resolve("opt/nftproxy/runtime").resolve(f)), f);
        }
        assertTrue(files(root).stream().anyMatch(f -> f.endsWith("/libnftables.so.1")), "libnftables for in-process nftables");
        assertFalse(Files.exists(root.resolve("bin/sh")), "no shell");

        // The launcher's JVM options for a command that keeps no archive of its own (the container's layer is lost).
        ReleaseTarball.Run flags = ReleaseTarball.run(List.of("/bin/sh", "-c", ". \"$0\"; nftproxy_jvm_flags /opt/nftproxy/nftproxy.jar ''",
                lib.resolve("nftproxy-jvm.sh").toString()), Map.of(), tmp, 30);
        assertEquals(0, flags.exit(), flags.toString());
        List<String> expected = new ArrayList<>(List.of(flags.stdout().strip().split(" ")));
        expected.addAll(List.of("-jar", "/opt/nftproxy/nftproxy.jar"));
        assertTrue(expected.contains("-XX:+UseSerialGC") && expected.contains("-Xmx1g"), expected.toString());
        assertEquals(expected, Files.readAllLines(root.resolve("opt/nftproxy/jvm.args")));

        // Owners and times reset, so that the same input gives the same digest.
        List<String> odd = image.layerListing().lines()
                .filter(l -> !l.matches("\\S+ 0/0 +\\d+ 1970-01-01 00:00 .*")).toList();
        assertEquals(List.of(), odd, "every entry root-owned at time 0");
    }

    /**
     * The image's own file system runs the daemon: {@code run --once} on the example manifests, from a chroot of
     * the unpacked layer (a /proc of its own, as a container has) in a throwaway namespace, programs both tables
     * through the libnftables the image carries.
     */
    @Test
    void theImageRunsTheDaemonFromItsOwnFilesInANamespace() throws Exception {
        KernelTests.assumeAvailable();
        String unshare = KernelNamespace.executable("unshare").orElse(null);
        String chroot = KernelNamespace.executable("chroot").orElse(null);
        Assumptions.assumeTrue(unshare != null && chroot != null, "needs unshare and chroot (util-linux, coreutils)");
        Path tarball = ReleaseTarball.find();
        ReleaseImage image = ReleaseImage.open(ReleaseImage.find(), Files.createDirectory(tmp.resolve("oci")));
        Path root = image.unpackLayer(tmp.resolve("root"));
        copyTree(EXAMPLES, root.resolve("examples"));
        List<String> inImage = new ArrayList<>(List.of(unshare, "--mount", "--pid", "--fork", "--mount-proc=" + root.resolve("proc"),
                chroot, root.toString()));
        inImage.addAll(ENTRYPOINT);

        List<String> version = new ArrayList<>(inImage);
        version.add("--version");
        ReleaseTarball.Run v = ReleaseTarball.run(version, Map.of(), tmp, 60);
        assertEquals(0, v.exit(), v.toString());
        assertTrue(v.stdout().startsWith("nftproxy " + version(tarball) + " (commit "), v.toString());

        try (KernelNamespace ns = KernelNamespace.create("relimg")) {
            List<String> once = new ArrayList<>(List.of(KernelNamespace.executable("ip").orElseThrow(), "netns", "exec", ns.name()));
            once.addAll(inImage);
            once.addAll(List.of("run", "--once", "--manifests", "/examples", "--hostname-override", "k8s-node-1"));
            ReleaseTarball.Run r = ReleaseTarball.run(once, Map.of(), tmp, 180);
            assertEquals(0, r.exit(), r.toString());
            assertTrue(r.stderr().contains("libnftables loaded in-process"), "no nft binary in the image: " + r);
            assertTrue(r.stdout().contains("applied table ip kube-proxy: converge sync"), r.toString());
            assertTrue(r.stdout().contains("applied table ip6 kube-proxy: converge sync"), r.toString());
            String table = ns.listTableText(IpFamily.IPV4);
            assertTrue(table.contains("service-ips") && table.contains("10.105.101.118"), table);
        }
    }

    /**
     * Debian's containerd imports the archive (as CI's node does) and runs it with runc: the entry point with no
     * arguments prints the help, with {@code --version} the release's version. A containerd of the test's own
     * ({@link TestContainerd}); the containers get a network namespace of their own.
     */
    @Test
    void containerdImportsAndRunsIt() throws Exception {
        KernelTests.skipIfMissing(TestContainerd.unavailabilityCause());
        Path tarball = ReleaseTarball.find();
        Path archive = ReleaseImage.find();
        String ref = "localhost/nftproxy:" + version(tarball);
        try (TestContainerd containerd = TestContainerd.start(tmp.resolve("ctd"), "nftp-relimg-" + ProcessHandle.current().pid())) {
            ReleaseTarball.Run imported = ReleaseTarball.run(containerd.ctr("images", "import", archive.toString()), Map.of(), tmp, 180);
            assertEquals(0, imported.exit(), imported.toString());
            ReleaseTarball.Run listed = ReleaseTarball.run(containerd.ctr("images", "ls", "-q"), Map.of(), tmp, 30);
            assertEquals(List.of(ref), listed.stdout().lines().toList(), listed.toString());

            ReleaseTarball.Run help = ReleaseTarball.run(containerd.ctr("run", "--rm", ref, "nftp-help"), Map.of(), tmp, 120);
            assertEquals(0, help.exit(), help.toString());
            assertTrue(help.stdout().startsWith("Usage: nftproxy"), help.toString());
            List<String> versionArgs = new ArrayList<>(containerd.ctr("run", "--rm", ref, "nftp-version"));
            versionArgs.addAll(ENTRYPOINT);
            versionArgs.add("--version");
            ReleaseTarball.Run v = ReleaseTarball.run(versionArgs, Map.of(), tmp, 120);
            assertEquals(0, v.exit(), v.toString());
            assertTrue(v.stdout().startsWith("nftproxy " + version(tarball) + " (commit "), v.toString());
        }
    }

    private static List<String> files(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).map(p -> "/" + dir.relativize(p)).sorted().toList();
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(t);
                else Files.copy(p, t);
            }
        }
    }
}
