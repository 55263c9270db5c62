package io.nftproxy.it.release;

import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * nftproxy.service under a real systemd: Debian's systemd booted as PID 1 of a systemd-nspawn container inside a
 * network namespace this test creates, the release tarball installed into it by its own install.sh (user nftproxy,
 * the unit, /etc/nftproxy/config.yaml, the bundled Java runtime), the unit run as shipped except for a drop-in that
 * names the example manifests as the source (no API server inside) and a shorter watchdog period (6 s instead of 30,
 * so the wedge test takes seconds).
 *
 * <p>Shown, in order: {@code systemctl start} returns only after the first sync ({@code READY=1}); the sandbox holds
 * with User=nftproxy and CAP_NET_ADMIN alone while libnftables, conntrack netlink and rtnetlink all work (the table,
 * the conntrack reconciler's metric, no permission warnings, /healthz 200); a wedged daemon (SIGSTOP) is killed by
 * the watchdog and restarted; {@code systemctl stop} leaves the unit inactive, not failed, and the rules in place;
 * a typo in the config file leaves the unit failed, not restarting, with the message in {@code systemctl status}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SystemdUnitNspawnTest {
    private static final Path BUILD_ROOT = Path.of("nspawn", "build-root.sh").toAbsolutePath();
    private static final Path EXAMPLES = Path.of("..", "examples").toAbsolutePath().normalize();
    private static final String UNIT = "nftproxy.service";
    /** The shipped unit's ExecStart with the example manifests as the source, and a watchdog a test can wait for. */
    private static final String DROP_IN = """
            [Service]
            ExecStart=
            ExecStart=/usr/local/bin/nftproxy run --config /etc/nftproxy/config.yaml --manifests /srv/manifests --hostname-override k8s-node-1
            WatchdogSec=6s
            """;
    /** CAP_NET_ADMIN is capability 12: this mask and nothing else. */
    private static final String NET_ADMIN_ONLY = "0000000000001000";

    private static Path work;
    private static KernelNamespace netns;
    private static NspawnMachine machine;
    private static long startMillis;
    private static final String ESTABLISHED = "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established";
    private static final String CLOSE_WAIT = "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_close_wait";
    /** The namespace's own values before the unit's first start (the kernel's defaults in a new namespace). */
    private static String establishedBefore;
    private static String closeWaitBefore;

    @BeforeAll
    static void bootAndInstall() throws Exception {
        KernelTests.assumeAvailableAnd(NspawnMachine.unavailabilityCause());
        Path root = root();
        KernelTests.skipIfMissing(KernelTests.causeIf(root == null,
                "no nspawn root and it could not be built (integration-tests/nspawn/build-root.sh; needs debootstrap)"));

        long t0 = System.nanoTime();
        work = Files.createTempDirectory("nftp-systemd-");
        Path release = ReleaseTarball.unpack(ReleaseTarball.find(), Files.createDirectory(work.resolve("release")));
        netns = KernelNamespace.create("sd");
        netns.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
        String name = "nftp-sd-" + ProcessHandle.current().pid();
        machine = NspawnMachine.boot(root, netns, name, List.of(release + ":/opt/nftproxy-release",
                EXAMPLES + ":/srv/manifests"), work.resolve("nspawn.log"));
        System.out.printf("systemd: booted in %d ms%n", (System.nanoTime() - t0) / 1_000_000);

        KernelNamespace.Result install = machine.exec("/opt/nftproxy-release/install.sh");
        assertEquals(0, install.exitCode(), install.stdout() + install.stderr());
        KernelNamespace.Result dropIn = machine.execWithInput(DROP_IN, "sh", "-c",
                "mkdir -p /etc/systemd/system/nftproxy.service.d && cat > /etc/systemd/system/nftproxy.service.d/test.conf");
        assertEquals(0, dropIn.exitCode(), dropIn.stderr());
        machine.ok("systemctl", "daemon-reload");
        establishedBefore = netns.execChecked("cat", ESTABLISHED).strip();
        closeWaitBefore = netns.execChecked("cat", CLOSE_WAIT).strip();
    }

    /** The cached root, built now when missing and debootstrap is there; null when it cannot be had. */
    private static Path root() throws IOException {
        String cache = System.getenv().getOrDefault("NFTPROXY_TEST_CACHE", System.getProperty("user.home") + "/.cache/nftproxy");
        Path root = Path.of(cache, "nspawn-root");
        if (Files.isExecutable(root.resolve("usr/lib/systemd/systemd"))) return root;
        if (KernelNamespace.executable("debootstrap").isEmpty()) return null;
        KernelNamespace.Result built = KernelNamespace.run(Duration.ofMinutes(15), null, "bash", BUILD_ROOT.toString());
        System.out.println(built.stderr());
        return built.ok() ? root : null;
    }

    @AfterAll
    static void tearDown() throws IOException {
        try {
            if (machine != null) {
                System.out.println("--- journal of " + UNIT + " ---\n" + machine.exec("journalctl", "-u", UNIT, "--no-pager", "-o", "short-monotonic").stdout());
                machine.close();
            }
        } finally {
            if (netns != null) netns.close();
            if (work != null) {
                try (Stream<Path> s = Files.walk(work)) {
                    for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
                }
            }
        }
    }

    @Test
    @Order(1)
    void startReturnsOnlyAfterTheFirstSync() throws Exception {
        long t0 = System.nanoTime();
        KernelNamespace.Result start = machine.exec("systemctl", "start", UNIT);
        startMillis = (System.nanoTime() - t0) / 1_000_000;
        // Right after start returns: a unit of Type=notify is "started" at READY=1, which the daemon sends after the
        // first sync, so the table is already there.
        KernelNamespace.Result table = machine.exec("nft", "list", "table", "ip", "kube-proxy");
        assertEquals(0, start.exitCode(), start.stderr() + machine.log());
        assertEquals(0, table.exitCode(), "no table when systemctl start returned: " + table.stderr());
        assertTrue(table.stdout().contains("service-ips"), table.stdout());
        assertEquals("active", machine.property(UNIT, "ActiveState"));
        assertEquals("running", machine.property(UNIT, "SubState"));
        assertEquals("tables programmed", machine.property(UNIT, "StatusText"));
        // systemd marks the unit active when READY=1 arrives, not when the process starts (as for Type=simple): the
        // gap is the JVM's start and the first sync. (The journal's line order cannot show this: the daemon's stderr
        // and its notification reach journald by different ways.)
        long execStart = Long.parseLong(machine.property(UNIT, "ExecMainStartTimestampMonotonic"));
        long active = Long.parseLong(machine.property(UNIT, "ActiveEnterTimestampMonotonic"));
        assertTrue(active - execStart > 200_000, "active " + (active - execStart) / 1000 + " ms after the process started");
        System.out.printf("systemd: READY=1 %d ms after the JVM started%n", (active - execStart) / 1000);
        System.out.printf("systemd: systemctl start returned after %d ms, the table in place%n", startMillis);
    }

    /**
     * The privileged ExecStartPre (--init-only) set kube-proxy's default TCP timeouts in the container's network
     * namespace (this test's), which the daemon itself could not: its /proc/sys is read-only (ProtectKernelTunables)
     * and it is not root. It found them set and wrote nothing.
     */
    @Test
    @Order(2)
    void thePreStartSetsTheSysctlsAndTheDaemonRunsWithReadOnlyKernelTunables() throws Exception {
        assertNotEquals("86400", establishedBefore, "the namespace already had kube-proxy's timeout: nothing to prove");
        assertEquals("86400", netns.execChecked("cat", ESTABLISHED).strip(), "24h, kube-proxy's default, was " + establishedBefore);
        assertEquals("3600", netns.execChecked("cat", CLOSE_WAIT).strip(), "1h, kube-proxy's default, was " + closeWaitBefore);
        assertTrue(machine.property(UNIT, "ExecStartPre").contains("--init-only"), machine.property(UNIT, "ExecStartPre"));

        String pid = machine.property(UNIT, "MainPID");
        List<String> procSys = machine.ok("cat", "/proc/" + pid + "/mountinfo").lines()
                .filter(l -> l.split(" ")[4].equals("/proc/sys")).toList();
        assertFalse(procSys.isEmpty(), "no mount on /proc/sys for the daemon: ProtectKernelTunables is not in effect");
        assertTrue(procSys.get(procSys.size() - 1).split(" ")[5].startsWith("ro"), "the daemon's /proc/sys: " + procSys);

        String journal = machine.ok("journalctl", "-u", UNIT, "--no-pager", "-o", "cat");
        assertTrue(journal.contains("nf_conntrack_tcp_timeout_established=86400 (was " + establishedBefore + ")"), journal);
        // A daemon that had tried to write one would have failed its start on the read-only mount.
        assertFalse(journal.contains("Read-only file system"), journal);
    }

    @Test
    @Order(3)
    void theSandboxHoldsWithNetAdminAloneAndEveryNetlinkUseWorks() throws Exception {
        String pid = machine.property(UNIT, "MainPID");
        String status = machine.ok("cat", "/proc/" + pid + "/status");
        String uid = machine.ok("id", "-u", "nftproxy").strip();
        assertEquals(uid, field(status, "Uid").split("\\s+")[0], "runs as the user nftproxy");
        assertFalse(uid.equals("0"));
        for (String caps : List.of("CapEff", "CapPrm", "CapBnd", "CapAmb")) {
            assertEquals(NET_ADMIN_ONLY, field(status, caps), caps + ": CAP_NET_ADMIN only");
        }
        assertEquals("1", field(status, "NoNewPrivs"));
        assertEquals("2", field(status, "Seccomp"), "a system-call filter is installed");
        assertEquals(String.valueOf(1536L * 1024 * 1024), machine.property(UNIT, "MemoryMax"));
        assertTrue(machine.ok("readlink", "/proc/" + pid + "/exe").startsWith("/usr/local/lib/nftproxy/runtime/"),
                "the bundled runtime, no system Java");

        // The container shares this test's network namespace, so its servers answer here.
        assertEquals(200, httpStatus("127.0.0.1", 10256, "/healthz"));
        String metrics = httpBody("127.0.0.1", 10249, "/metrics");
        // kube-dns in the examples has UDP ports: the first sync's conntrack reconciliation went over conntrack netlink.
        Matcher m = Pattern.compile("(?m)^kubeproxy_conntrack_reconciler_sync_duration_seconds_count\\{[^}]*} ([0-9.]+)").matcher(metrics);
        assertTrue(m.find() && Double.parseDouble(m.group(1)) >= 1, "conntrack reconciled at least once:\n" + metrics);
        String journal = machine.ok("journalctl", "-u", UNIT, "--no-pager", "-o", "cat");
        for (String bad : List.of("conntrack cleanup failed", "cannot list interface addresses", "Operation not permitted",
                "permission denied", "address monitor")) {
            assertFalse(journal.toLowerCase().contains(bad.toLowerCase()), "journal says '" + bad + "':\n" + journal);
        }
        // The rules went into this test's namespace, through the container: the host's own is not involved.
        KernelNamespace.Result here = netns.exec(Duration.ofSeconds(10), null, "nft", "list", "table", "ip", "kube-proxy");
        assertEquals(0, here.exitCode(), here.stderr());
    }

    @Test
    @Order(4)
    void theWatchdogRestartsAWedgedDaemon() throws Exception {
        String wedged = machine.property(UNIT, "MainPID");
        // "kill -STOP 0" would stop the caller's whole process group (this JVM among it): a real PID or nothing.
        assertTrue(wedged.matches("[1-9][0-9]*") && !wedged.equals("1"), "no main process to wedge: MainPID=" + wedged);
        int restarts = Integer.parseInt(machine.property(UNIT, "NRestarts"));
        machine.ok("kill", "-STOP", wedged);
        long t0 = System.nanoTime();
        long deadline = t0 + Duration.ofSeconds(120).toNanos();
        String pid = wedged;
        String state = "";
        while (pid.equals(wedged) || !state.equals("active")) {
            assertTrue(System.nanoTime() < deadline, "not restarted within 120 s: pid " + pid + ", " + state + "\n"
                    + machine.exec("journalctl", "-u", UNIT, "--no-pager", "-n", "30").stdout());
            Thread.sleep(250);
            pid = machine.property(UNIT, "MainPID");
            state = machine.property(UNIT, "ActiveState");
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(Integer.parseInt(machine.property(UNIT, "NRestarts")) > restarts);
        String journal = machine.ok("journalctl", "-u", UNIT, "--no-pager", "-o", "cat");
        assertTrue(journal.contains("Watchdog timeout"), "killed by the watchdog:\n" + journal);
        assertEquals(0, machine.exec("nft", "list", "table", "ip", "kube-proxy").exitCode(), "the table survived the restart");
        assertEquals(200, httpStatus("127.0.0.1", 10256, "/healthz"));
        System.out.printf("systemd: wedged daemon (SIGSTOP) replaced after %d ms (WatchdogSec=6s)%n", ms);
    }

    @Test
    @Order(5)
    void stopLeavesTheUnitInactiveAndTheRulesInPlace() throws Exception {
        String before = machine.ok("nft", "list", "table", "ip", "kube-proxy");
        KernelNamespace.Result stop = machine.exec("systemctl", "stop", UNIT);
        assertEquals(0, stop.exitCode(), stop.stderr());
        assertEquals("inactive", machine.property(UNIT, "ActiveState"));
        assertEquals("success", machine.property(UNIT, "Result"), "not failed");
        KernelNamespace.Result failed = machine.exec("systemctl", "is-failed", UNIT);
        assertEquals("inactive", failed.stdout().strip());
        assertEquals(before, machine.ok("nft", "list", "table", "ip", "kube-proxy"), "the rules are left as they were");
        // This stop was the first clean exit of the jar: the JVM wrote its class-data archive, and said nothing.
        String journal = machine.ok("journalctl", "-u", UNIT, "--no-pager", "-o", "cat");
        assertFalse(journal.contains("][warning]["), "JVM warnings in the journal:\n" + journal);
        assertTrue(machine.exec("sh", "-c", "ls /var/cache/nftproxy/nftproxy-*.jsa").ok(), "the daemon's archive was written");
    }

    /**
     * A typo in the configuration is for an operator to fix, not for restarts: the daemon exits 2 and
     * RestartPreventExitStatus=2 leaves the unit failed (not "activating (auto-restart)" every RestartSec), with the
     * error in {@code systemctl status}. The pre-start reads the same file and fails too, but its failure is ignored
     * ('-'), because systemd applies RestartPreventExitStatus= to the main process only.
     */
    @Test
    @Order(6)
    void aConfigTypoLeavesTheUnitFailedWithItsMessage() throws Exception {
        String config = "/etc/nftproxy/config.yaml";
        machine.ok("cp", config, config + ".good");
        try {
            machine.ok("sh", "-c", "printf 'clusterCIRD: 10.244.0.0/16\\n' >> " + config);
            int restarts = Integer.parseInt(machine.property(UNIT, "NRestarts"));
            KernelNamespace.Result start = machine.exec("systemctl", "start", UNIT);
            assertNotEquals(0, start.exitCode(), "systemctl start with a typo in the config: " + start.stdout());
            // Three times RestartSec: a unit that restarts would have been started again, and again, meanwhile.
            Thread.sleep(6_000);
            assertEquals("failed", machine.property(UNIT, "ActiveState"), "not restarting");
            assertEquals("exit-code", machine.property(UNIT, "Result"));
            assertEquals("2", machine.property(UNIT, "ExecMainStatus"));
            assertEquals(restarts, Integer.parseInt(machine.property(UNIT, "NRestarts")), "restarts after the typo");
            String status = machine.exec("systemctl", "status", "--no-pager", "-l", "-n", "30", UNIT).stdout();
            System.out.println("systemd: a config typo leaves the unit failed:\n" + status);
            assertTrue(status.contains("failed"), status);
            assertTrue(status.contains("invalid configuration") && status.contains("clusterCIRD"), "the message in systemctl status:\n" + status);
        } finally {
            machine.ok("mv", config + ".good", config);
            machine.exec("systemctl", "reset-failed", UNIT);
        }
    }

    private static String field(String procStatus, String name) {
        return procStatus.lines().filter(l -> l.startsWith(name + ":")).map(l -> l.substring(name.length() + 1).strip())
                .findFirst().orElse("(no " + name + ")");
    }

    private static int httpStatus(String host, int port, String path) throws Exception {
        String head = http(host, port, path).lines().findFirst().orElse("");
        return Integer.parseInt(head.split(" ")[1]);
    }

    private static String httpBody(String host, int port, String path) throws Exception {
        String all = http(host, port, path);
        return all.substring(all.indexOf("\r\n\r\n") + 4);
    }

    /** One HTTP/1.0 GET from a thread inside the test's namespace (where the container's servers listen). */
    private static String http(String host, int port, String path) throws Exception {
        try (NetnsThread t = NetnsThread.start(netns.handle())) {
            return t.call(() -> {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress(host, port), 3_000);
                    s.setSoTimeout(5_000);
                    s.getOutputStream().write(("GET " + path + " HTTP/1.0\r\nHost: " + host + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    InputStream in = s.getInputStream();
                    ByteArrayOutputStream out = new ByteArrayOutputStream();
                    in.transferTo(out);
                    return out.toString(StandardCharsets.UTF_8);
                }
            });
        }
    }
}
