package io.nftproxy.systemd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** install.sh round trips in a staging root, and the unit checked by systemd's own tools where they exist. */
class UnitFilesTest {
    // Surefire runs with the module directory as working directory.
    private static final Path MODULE = Path.of("").toAbsolutePath();
    private static final Path INSTALL = MODULE.resolve("install.sh");
    private static final Path UNIT = MODULE.resolve("src/main/dist/nftproxy.service");
    private static final Path MODULES = MODULE.resolve("src/main/dist/nftproxy-modules.conf");
    private static final Path TEMPLATE = MODULE.resolve("src/main/dist/config.yaml");
    /** systemd-analyze security's scale is 0 (locked down) to 10 (exposed); 2.0 when written. */
    private static final double MAX_EXPOSURE = 2.5;

    @TempDir
    Path tmp;

    record Result(int exit, String output) {
    }

    private static Result run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getOutputStream().close();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "timed out: " + command);
        return new Result(process.exitValue(), output);
    }

    private static String skipUnless(String tool) throws IOException, InterruptedException {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path candidate = Path.of(dir, tool);
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        String cause = tool + " not found on PATH";
        System.out.println("skipped: " + cause);
        Assumptions.assumeTrue(false, cause);
        return null;
    }

    private Result install(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(skipUnless("bash"), INSTALL.toString()));
        command.addAll(List.of(args));
        return run(command);
    }

    private static List<String> tree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            return paths.filter(p -> !p.equals(root)).map(p -> root.relativize(p).toString()).sorted()
                    .collect(Collectors.toList());
        }
    }

    private static final Path JVM_OPTIONS = Path.of("src/main/dist/nftproxy-jvm.sh");

    @Test
    void installThenUninstallLeavesTheStagingRootEmpty() throws Exception {
        Path jar = Files.writeString(tmp.resolve("nftproxy.jar"), "not really a jar");
        Path root = Files.createDirectory(tmp.resolve("root"));

        Result installed = install("--jar", jar.toString(), "--prefix", root.toString());
        assertEquals(0, installed.exit(), installed.output());
        assertEquals(List.of("etc", "etc/modules-load.d", "etc/modules-load.d/nftproxy.conf", "etc/nftproxy",
                "etc/nftproxy/config.yaml", "etc/systemd",
                "etc/systemd/system", "etc/systemd/system/nftproxy.service", "usr", "usr/local", "usr/local/bin",
                "usr/local/bin/nftproxy", "usr/local/lib", "usr/local/lib/nftproxy",
                "usr/local/lib/nftproxy/nftproxy-jvm.sh", "usr/local/lib/nftproxy/nftproxy.jar"), tree(root));
        assertEquals(Files.readString(UNIT), Files.readString(root.resolve("etc/systemd/system/nftproxy.service")));
        assertEquals(Files.readString(MODULES), Files.readString(root.resolve("etc/modules-load.d/nftproxy.conf")));
        assertEquals("not really a jar", Files.readString(root.resolve("usr/local/lib/nftproxy/nftproxy.jar")));
        Path launcher = root.resolve("usr/local/bin/nftproxy");
        assertTrue(Files.getPosixFilePermissions(launcher).contains(PosixFilePermission.OTHERS_EXECUTE));
        // exec, so the JVM is the unit's main process and NotifyAccess=main accepts its notifications.
        assertTrue(Files.readString(launcher).contains("exec \"$java\""), Files.readString(launcher));
        assertEquals(Files.readString(TEMPLATE), Files.readString(root.resolve("etc/nftproxy/config.yaml")));

        Result again = install("--jar", jar.toString(), "--prefix", root.toString());
        assertEquals(0, again.exit(), "reinstall over an install: " + again.output());

        Result removed = install("--uninstall", "--prefix", root.toString());
        assertEquals(0, removed.exit(), removed.output());
        assertEquals(List.of(), tree(root));
        assertTrue(removed.output().contains("tables were left in place"), removed.output());
    }

    @Test
    void uninstallKeepsWhatItDidNotInstall() throws Exception {
        Path jar = Files.writeString(tmp.resolve("nftproxy.jar"), "jar");
        Path root = Files.createDirectory(tmp.resolve("root"));
        assertEquals(0, install("--jar", jar.toString(), "--prefix", root.toString()).exit());
        Path neighbour = Files.writeString(root.resolve("usr/local/bin/kubectl"), "#!/bin/sh\n");

        assertEquals(0, install("--uninstall", "--prefix", root.toString()).exit());
        assertEquals(List.of("usr", "usr/local", "usr/local/bin", "usr/local/bin/kubectl"), tree(root));
        assertTrue(Files.exists(neighbour));
    }

    @Test
    void dryRunChangesNothingAndSaysWhatItWouldDo() throws Exception {
        Path jar = Files.writeString(tmp.resolve("nftproxy.jar"), "jar");
        Path root = Files.createDirectory(tmp.resolve("root"));
        Result dry = install("--dry-run", "--jar", jar.toString(), "--prefix", root.toString());
        assertEquals(0, dry.exit(), dry.output());
        assertEquals(List.of(), tree(root));
        assertTrue(dry.output().contains(root.resolve("etc/systemd/system/nftproxy.service").toString()), dry.output());

        // The live-system plan, printed without root and without touching anything.
        Result live = install("--dry-run", "--jar", jar.toString());
        assertEquals(0, live.exit(), live.output());
        assertTrue(live.output().contains("would run: useradd --system"), live.output());
        assertTrue(live.output().contains("would run: modprobe nf_tables"), live.output());
        assertTrue(live.output().contains("would run: systemctl daemon-reload"), live.output());

        Result liveRemove = install("--dry-run", "--uninstall");
        assertEquals(0, liveRemove.exit(), liveRemove.output());
        assertTrue(liveRemove.output().contains("would run: systemctl disable --now nftproxy.service"),
                liveRemove.output());
        assertFalse(liveRemove.output().contains("would run: nft"), "uninstall must never run nft: " + liveRemove.output());
    }

    @Test
    void uninstallNeverTouchesNftables() throws IOException {
        // Stopping the proxy must not break the dataplane: no nft command, no `nftproxy cleanup`, anywhere it runs.
        for (String line : Files.readAllLines(INSTALL)) {
            String code = line.strip();
            if (code.startsWith("#") || code.startsWith("say ") || code.startsWith("echo ")) {
                continue;
            }
            assertFalse(code.matches(".*\\bnft\\s.*") || code.contains("cleanup"), "install.sh runs: " + line);
        }
    }

    @Test
    void badArgumentsFail() throws Exception {
        Result unknown = install("--frobnicate");
        assertTrue(unknown.exit() != 0 && unknown.output().contains("unknown argument"), unknown.output());
        Result missingJar = install("--jar", tmp.resolve("absent.jar").toString(), "--prefix", tmp.toString());
        assertTrue(missingJar.exit() != 0 && missingJar.output().contains("jar not found"), missingJar.output());
        assertEquals(List.of(), tree(tmp));
    }

    @Test
    void systemdAnalyzeVerifyAcceptsTheUnit() throws Exception {
        String analyze = skipUnless("systemd-analyze");
        // verify checks that ExecStart's binary exists; point it at one that does, leaving every other line as is.
        String unit = Files.readString(UNIT).replace("ExecStart=/usr/local/bin/nftproxy ", "ExecStart=/bin/true ")
                .replace("NFTPROXY_NO_CDS=1 /usr/local/bin/nftproxy ", "NFTPROXY_NO_CDS=1 /bin/true ");
        assertTrue(unit.contains("ExecStart=/bin/true run --config /etc/nftproxy/config.yaml"));
        assertTrue(unit.contains("ExecStartPre=-+/usr/bin/env NFTPROXY_NO_CDS=1 /bin/true run --init-only --config /etc/nftproxy/config.yaml"));
        Path copy = Files.writeString(tmp.resolve("nftproxy.service"), unit);
        Result verify = run(List.of(analyze, "verify", copy.toString()));
        // verify exits 0 even for unknown or misplaced keys, so any output at all is a finding.
        assertEquals(new Result(0, ""), verify);
    }

    @Test
    void systemdAnalyzeSecurityExposureStaysLow() throws Exception {
        String analyze = skipUnless("systemd-analyze");
        Path jar = Files.writeString(tmp.resolve("nftproxy.jar"), "jar");
        Path root = Files.createDirectory(tmp.resolve("root"));
        assertEquals(0, install("--jar", jar.toString(), "--prefix", root.toString()).exit());
        Result security = run(List.of(analyze, "security", "--offline=true", "--root=" + root, "--no-pager",
                "nftproxy.service"));
        Matcher score = Pattern.compile("Overall exposure level for nftproxy\\.service: ([0-9.]+)")
                .matcher(security.output());
        if (!score.find()) {
            String cause = "systemd-analyze security --offline unsupported here: " + security.output().strip();
            System.out.println("skipped: " + cause);
            Assumptions.assumeTrue(false, cause);
        }
        double exposure = Double.parseDouble(score.group(1));
        System.out.printf("systemd-analyze security: exposure %.1f (lower is better)%n", exposure);
        assertTrue(exposure <= MAX_EXPOSURE, "exposure " + exposure + "\n" + security.output());
    }

    @Test
    void unitCarriesTheRequiredDirectives() throws IOException {
        List<String> lines = Files.readAllLines(UNIT).stream().map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#")).collect(Collectors.toList());
        for (String required : List.of("Type=notify", "NotifyAccess=main", "WatchdogSec=30s", "Restart=always",
                "ExecStart=/usr/local/bin/nftproxy run --config /etc/nftproxy/config.yaml", "RestartSec=2s",
                // The sysctls are set by a privileged pre-start, so the daemon gets a read-only /proc/sys.
                "ExecStartPre=-+/usr/bin/env NFTPROXY_NO_CDS=1 /usr/local/bin/nftproxy run --init-only --config /etc/nftproxy/config.yaml",
                "ProtectKernelTunables=yes",
                "OOMScoreAdjust=-999", "TimeoutStopSec=20s", "KillSignal=SIGTERM", "User=nftproxy",
                "AmbientCapabilities=CAP_NET_ADMIN", "CapabilityBoundingSet=CAP_NET_ADMIN", "NoNewPrivileges=yes",
                "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "PrivateDevices=yes",
                "ProtectKernelModules=yes", "ProtectKernelLogs=yes", "ProtectControlGroups=yes", "ProtectClock=yes",
                "ProtectHostname=yes", "RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6",
                "RestrictNamespaces=yes", "RestrictRealtime=yes", "RestrictSUIDSGID=yes", "LockPersonality=yes",
                "SystemCallArchitectures=native", "SystemCallFilter=@system-service",
                "CacheDirectory=nftproxy", "Environment=NFTPROXY_CDS_DIR=/var/cache/nftproxy")) {
            assertTrue(lines.contains(required), "missing " + required);
        }
        // The host's network namespace is the one to program, and the JIT needs W+X memory.
        for (String forbidden : List.of("PrivateNetwork", "MemoryDenyWriteExecute", "PrivateUsers", "ExecStop")) {
            assertTrue(lines.stream().noneMatch(l -> l.startsWith(forbidden + "=")), forbidden + " must not be set");
        }
    }

    /** What nftproxy-jvm.sh gives for {@code args} with the environment {@code env}. */
    private static String jvmFlags(Path jar, String subcommand, Map<String, String> env) throws Exception {
        return jvmFlags(jar, subcommand, "java", env);
    }

    /** As {@link #jvmFlags(Path, String, Map)}, for the java binary {@code javaBin}. */
    private static String jvmFlags(Path jar, String subcommand, String javaBin, Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", ". \"$0\"; nftproxy_jvm_flags \"$1\" \"$2\" \"$3\"",
                JVM_OPTIONS.toString(), jar.toString(), subcommand, javaBin).redirectErrorStream(true);
        pb.environment().remove("NFTPROXY_NO_CDS");
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        return out;
    }

    @Test
    void theDaemonGetsAClassDataArchiveNamedByItsJarOtherCommandsDoNot() throws Exception {
        Path jar = Files.writeString(tmp.resolve("nftproxy.jar"), "a jar");
        Path cds = tmp.resolve("cds");
        Map<String, String> env = Map.of("NFTPROXY_CDS_DIR", cds.toString());
        String first = jvmFlags(jar, "run", env);
        assertTrue(first.contains("-XX:TieredStopAtLevel=1") && first.contains("-Xlog:all=warning:stderr"), first);
        assertTrue(first.matches(".*-XX:ArchiveClassesAtExit=" + java.util.regex.Pattern.quote(cds.toString()) + "/nftproxy-\\d+-\\d+\\.jsa.*"), first);
        String archive = first.replaceAll(".*-XX:ArchiveClassesAtExit=(\\S+).*", "$1");
        Files.writeString(Path.of(archive), "archive");
        String second = jvmFlags(jar, "run", env);
        assertTrue(second.contains("-XX:SharedArchiveFile=" + archive) && !second.contains("ArchiveClassesAtExit"), second);

        // A new jar (other size and time) never maps the old archive, and the old one goes.
        Files.writeString(jar, "a longer jar");
        Files.setLastModifiedTime(jar, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 5000));
        String rebuilt = jvmFlags(jar, "run", env);
        assertTrue(rebuilt.contains("-XX:ArchiveClassesAtExit=") && !rebuilt.contains(archive), rebuilt);
        assertFalse(Files.exists(Path.of(archive)), "the old archive is removed");

        assertFalse(jvmFlags(jar, "render", env).contains("Archive"), "only the daemon keeps an archive");
        assertFalse(jvmFlags(jar, "run", Map.of("NFTPROXY_CDS_DIR", cds.toString(), "NFTPROXY_NO_CDS", "1")).contains("Archive"));
    }

    /** A heap that starts small and grows with the cluster, overridable; the thread-trimming flags only where the JVM has them. */
    @Test
    void theHeapStartsSmallAndJava17OnlyFlagsFollowTheRuntimesRelease() throws Exception {
        Path jar = Files.writeString(tmp.resolve("nftproxy.jar"), "a jar");
        Map<String, String> noCds = Map.of("NFTPROXY_NO_CDS", "1");
        Path jdk17 = fakeJdk("jdk17", "17.0.21.1");
        Path jdk21 = fakeJdk("jdk21", "21.0.5");
        String run17 = jvmFlags(jar, "run", jdk17.toString(), noCds);
        assertTrue(run17.contains("-Xms16m") && run17.contains("-XX:MaxNewSize=48m") && run17.contains("-Xmx1g"), run17);
        assertFalse(run17.contains("-Xms128m") || run17.contains("-Xmn"), run17);
        assertTrue(run17.contains("-XX:CICompilerCount=1 -XX:-MethodFlushing -XX:+UnlockDiagnosticVMOptions -XX:-UseNotificationThread"), run17);
        String run21 = jvmFlags(jar, "run", jdk21.toString(), noCds);
        assertFalse(run21.contains("MethodFlushing") || run21.contains("UseNotificationThread") || run21.contains("CICompilerCount"), run21);
        assertTrue(run21.contains("-Xms16m"), run21);
        assertFalse(jvmFlags(jar, "render", jdk17.toString(), noCds).contains("MethodFlushing"), "only the daemon trims its threads");
        assertFalse(jvmFlags(jar, "run", tmp.resolve("no-such-java").toString(), noCds).contains("MethodFlushing"),
                "an unreadable release file adds nothing");
    }

    /** A runtime directory with a release file saying {@code version} and an executable bin/java. */
    private Path fakeJdk(String name, String version) throws Exception {
        Path home = Files.createDirectories(tmp.resolve(name).resolve("bin")).getParent();
        Files.writeString(home.resolve("release"), "IMPLEMENTOR=\"test\"\nJAVA_VERSION=\"" + version + "\"\n");
        Path bin = Files.writeString(home.resolve("bin/java"), "#!/bin/sh\nexit 0\n");
        bin.toFile().setExecutable(true);
        return bin;
    }
}
