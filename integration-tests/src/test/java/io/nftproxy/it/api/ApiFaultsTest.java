package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.daemon.ProxyDaemon;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.render.TableLayout;
import io.nftproxy.source.KubernetesSource;
import io.nftproxy.source.api.ApiServer;
import io.nftproxy.systemd.SdNotify;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Faults between the daemon and a real kube-apiserver holding 1,000 Services of two endpoints (stored through etcd,
 * {@link StoredServices}), injected by a {@link FaultRelay} or done to the API server and etcd themselves. Each test
 * asserts that the daemon stayed up, what /livez and /healthz said during the fault, and that once the fault
 * cleared the kernel's whole IPv4 table equals the render of the API server's final state ({@link ClusterRender})
 * within a stated time. docs/faults.md lists the faults with the times measured here.
 *
 * <p>The daemon runs in this JVM, its kernel is a throwaway network namespace. The API server runs without a watch
 * cache, so a watch resuming at a compacted resource version gets 410 from etcd. One API server serves every test;
 * each test's changes use names of their own, and the final comparison covers every object, whoever wrote it.
 */
class ApiFaultsTest {
    private static final String NODE = "node-1";
    private static final String NS = "nftp-faults";
    private static final int SERVICES = 1_000;
    /** Short, so a dead watch is noticed within seconds (production: 15 s). */
    private static final Duration LAG_PROBE = Duration.ofSeconds(2);
    /** How a list begins in the relay's request log: a watch that streams the objects first (ListWatch). */
    private static final String STREAMED_LIST = "?watch=1&sendInitialEvents=true";
    private static final AtomicInteger NAMES = new AtomicInteger();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static ApiCluster cluster;
    private static ApiServerProcess api;
    private static KubernetesClient admin;

    private final List<AutoCloseable> cleanup = new ArrayList<>();
    private KernelNamespace node;
    private FaultRelay relay;
    private ProxyDaemon daemon;
    private KubernetesSource source;
    private ProxyConfig config;
    private TableLayout layout = TableLayout.DEFAULT;

    @BeforeAll
    static void startApiServerWithAThousandServices() throws Exception {
        ApiCluster.assumeAvailable("ApiFaultsTest", KernelNamespace.unavailabilityCause(), ApiServerBinaries.unavailabilityCause());
        cluster = ApiCluster.start(ApiServerProcess.Options.defaults().withApiServerArgs("--watch-cache=false"));
        api = cluster.api();
        admin = cluster.admin();
        long ms = cluster.namespace(NS).node(NODE).storeServices(NS, SERVICES, ApiFaultsTest::endpoints);
        System.out.printf("faults: %d services x 2 endpoints stored in %d ms%n", SERVICES, ms);
    }

    @AfterAll
    static void stopApiServer() throws IOException {
        if (cluster != null) cluster.close();
    }

    @AfterEach
    void stop() throws Exception {
        if (daemon != null) daemon.close();
        if (relay != null) relay.close();
        for (int i = cleanup.size() - 1; i >= 0; i--) cleanup.get(i).close();
        if (node != null) node.close();
        if (api != null && !api.apiServerRunning()) api.startApiServer();
    }

    private static List<String> endpoints(int n) {
        return List.of("10.252." + (n / 100) + "." + (n % 100 * 2 + 1), "10.252." + (n / 100) + "." + (n % 100 * 2 + 2));
    }

    // ---------------------------------------------------------------- faults

    /**
     * Fault 1: the API server is SIGKILLed while it sends the daemon its first list of Services (the relay cuts that
     * response after 4 KiB), and comes back 5 s later. Meanwhile nothing is programmed, /livez says 200 and /healthz
     * 503; once the server is back the first sync programs the whole cluster.
     */
    @Test
    void apiServerKilledInTheMiddleOfTheFirstListAndBroughtBack() throws Exception {
        prepareNode("kill1st");
        relay.trapFirstResponse("GET /api/v1/services?", () -> {
            try {
                api.killApiServer();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        startDaemon();
        await("the first list of Services was cut", Duration.ofSeconds(60), relay::trapFired);
        long killed = System.nanoTime();
        for (int i = 0; i < 10; i++) {
            assertEquals(200, status("/livez"), "/livez while the API server is dead");
            assertEquals(503, status("/healthz"), "/healthz before any complete sync");
            assertFalse(node.nftOut("list", "tables").contains("kube-proxy"), "a partial first sync was programmed");
            Thread.sleep(500);
        }
        assertFalse(source.problems().isEmpty(), "the daemon knows the API server is unusable");
        System.out.println("faults: killed mid first list; problems while down: " + new TreeSet<>(source.problems().values()));

        api.startApiServer();
        long up = System.nanoTime();
        assertTrue(daemon.awaitFirstSync(Duration.ofSeconds(90)), "first sync after the API server came back");
        long synced = ms(up);
        long matched = render().await(node, Duration.ofSeconds(30));
        assertEquals(200, status("/healthz"));
        System.out.printf("faults: killed mid first list: API server down %d ms; first sync %d ms after it was ready; "
                + "whole table equal to the render %d ms later%n", (up - killed) / 1_000_000, synced, matched);
    }

    /**
     * Fault 2: etcd compacted past every resource version the daemon's watches hold, then the API server restarted,
     * so every watch resumes at a compacted revision and gets 410 Gone at once. Each kind is listed again; changes
     * made before the compaction and after the restart all arrive. (DaemonAgainstApiServerTest covers one 410 after
     * a disconnection at a few Services.)
     */
    @Test
    void everyWatchGets410AtOnceAfterCompaction() throws Exception {
        prepareNode("gone");
        startDaemon();
        assertTrue(daemon.awaitFirstSync(Duration.ofSeconds(60)), "first sync");
        String a = newService(3);
        deleteService(1);
        moveEndpoints(2, "10.253.2.1");
        // Two writes the daemon does not watch: a watch from resource version R starts at R + 1, so the compaction
        // revision must be past that for every kind.
        for (int i = 0; i < 2; i++) {
            admin.configMaps().inNamespace(NS).resource(new ConfigMapBuilder().withNewMetadata().withName("bump-" + NAMES.incrementAndGet())
                    .endMetadata().build()).create();
        }
        int before = relay.requests().size();
        long compacted = api.compactEtcd();
        long t0 = System.nanoTime();
        api.stopApiServer();
        assertEquals(200, status("/livez"), "/livez while the API server is down");
        assertEquals(200, status("/healthz"), "/healthz: the table is right for the last state the daemon knew");
        api.startApiServer();
        newService(2);
        deleteService(4);
        long up = System.nanoTime();
        render().await(node, Duration.ofSeconds(60));
        // A list is a watch that streams it first (sendInitialEvents), as client-go's informers ask.
        for (String list : List.of("GET /api/v1/services" + STREAMED_LIST, "GET /apis/discovery.k8s.io/v1/endpointslices" + STREAMED_LIST,
                "GET /api/v1/nodes" + STREAMED_LIST)) {
            await("listed again after 410: " + list, Duration.ofSeconds(30), () -> relay.requests().subList(before, relay.requests().size())
                    .stream().anyMatch(l -> l.startsWith(list)));
        }
        assertEquals(200, status("/healthz"));
        System.out.printf("faults: compacted to %d, API server restarted (down %d ms): every watch listed again; "
                + "whole table (with %s) equal to the render %d ms after the restart%n", compacted, (up - t0) / 1_000_000, a, ms(up));
    }

    /**
     * Fault 3, as a watch meets it with the API server otherwise fine: every connection open now stops delivering
     * without closing (the relay holds its bytes), new connections pass, but slowly (each chunk held 50 ms). The lag
     * probe finds the watches behind and replaces them; every change arrives while the old connections are still
     * frozen. /livez and /healthz stay 200. (DaemonAgainstApiServerTest blackholes every connection, new ones too,
     * and restores the path: the same detection, a few Services.)
     */
    @Test
    void watchesThatStopDeliveringWithoutClosingAreReplaced() throws Exception {
        prepareNode("frozen");
        startDaemon();
        assertTrue(daemon.awaitFirstSync(Duration.ofSeconds(60)), "first sync");
        render().await(node, Duration.ofSeconds(30));
        relay.freeze();
        relay.delay(50);
        java.time.Instant frozen = java.time.Instant.now();
        long t0 = System.nanoTime();
        int before = relay.requests().size();
        String added = newService(2);
        deleteService(30);
        moveEndpoints(31, "10.253.31.1");
        // Each stale watch is found within about two probe intervals once the API server has news past it; five
        // are allowed (busy machine). Found means listed again on a new connection.
        Map<String, Long> found = new java.util.TreeMap<>();
        for (String list : List.of("GET /api/v1/services" + STREAMED_LIST, "GET /apis/discovery.k8s.io/v1/endpointslices" + STREAMED_LIST)) {
            await("relisted after its watch froze: " + list, LAG_PROBE.multipliedBy(5), () -> relay.requests().subList(before,
                    relay.requests().size()).stream().anyMatch(l -> l.startsWith(list)));
            found.put(list.substring(4, list.indexOf('?')), ms(t0));
        }
        render().await(node, Duration.ofSeconds(60));
        assertEquals(200, status("/livez"));
        assertEquals(200, status("/healthz"));
        System.out.printf("faults: watches frozen without closing (lag probe every %d s): listed again after %s ms; whole table "
                + "(with %s) equal to the render %d ms after the changes (frozen at %s), the frozen connections still open%n",
                LAG_PROBE.toSeconds(), found, added, ms(t0), frozen);
    }

    /**
     * Fault 4: the API server answers 429, then 500, then 503 (20 s each, through the relay, which also resets the
     * open watches when each starts), while Services and slices change on the real API server. The kernel keeps its
     * table, /livez and /healthz say 200 (what the daemon knows is programmed), the source names the HTTP status; when
     * the answers are good again every change arrives.
     */
    @Test
    void errorsFromTheApiServerForAMinuteLoseNoChange() throws Exception {
        prepareNode("errors");
        startDaemon();
        assertTrue(daemon.awaitFirstSync(Duration.ofSeconds(60)), "first sync");
        render().await(node, Duration.ofSeconds(30));
        String table = node.listTableText(IpFamily.IPV4);
        int k = 10;
        for (int code : new int[] {429, 500, 503}) {
            relay.answer(code);
            long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            newService(2);
            deleteService(k++);
            moveEndpoints(k++, "10.253." + (code % 256) + ".1");
            boolean named = false;
            while (System.nanoTime() < end) {
                assertEquals(200, status("/livez"), "/livez while the API server answers " + code);
                assertEquals(200, status("/healthz"), "/healthz while the API server answers " + code);
                named |= source.problems().values().stream().anyMatch(p -> p.contains("HTTP " + code));
                Thread.sleep(1_000);
            }
            assertTrue(named, "the source named HTTP " + code + ": " + source.problems());
            assertEquals(table, node.listTableText(IpFamily.IPV4), "the table changed while the API server answered " + code);
        }
        long answered = relay.answered();
        relay.pass();
        long t0 = System.nanoTime();
        render().await(node, Duration.ofSeconds(60));
        System.out.printf("faults: 60 s of 429/500/503 (%d requests answered with an error): whole table equal to the render %d ms after the "
                + "API server answered again%n", answered, ms(t0));
    }

    /**
     * Fault 5: {@code nftproxy run} (a child JVM, fast layout, so the cold start of 1,000 Services is over the
     * command budget and cut into several transactions) is SIGKILLed between two parts of its cold start: its
     * {@code nft} (exec mode, first on PATH) kills its parent when asked to apply a part of the IPv4 table while an
     * earlier part is already in the kernel. A new daemon (libnftables) reads the partial table back and completes it.
     */
    @Test
    void daemonSigkilledBetweenThePartsOfItsColdStartCompletesTheTableWhenStartedAgain() throws Exception {
        node = KernelNamespace.create("sigkill");
        node.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
        Path bin = Files.createTempDirectory("nftp-faults-bin-");
        cleanup.add(() -> deleteTree(bin));
        String realNft = KernelNamespace.executable("nft").orElseThrow();
        Path nft = bin.resolve("nft");
        Files.writeString(nft, """
                #!/bin/sh
                # A part of table ip kube-proxy while an earlier part is committed: SIGKILL the daemon (our parent).
                if [ "$1" = "-f" ] && [ "$2" = "-" ]; then
                  script=$(cat; echo x)
                  if printf '%s' "$script" | grep -q ' ip kube-proxy' && REAL list table ip kube-proxy >/dev/null 2>&1; then
                    kill -9 "$PPID"
                    sleep 10
                    exit 1
                  fi
                  printf '%s' "${script%x}" | exec REAL "$@"
                fi
                exec REAL "$@"
                """.replace("REAL", realNft));
        Files.setPosixFilePermissions(nft, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        {
            String[] args = childArgs("fast");
            List<String> killedArgs = new ArrayList<>(List.of(args));
            killedArgs.addAll(List.of("--nft-mode", "exec"));
            long t0 = System.nanoTime();
            int exit;
            try (io.nftproxy.it.daemon.DaemonProcess first = io.nftproxy.it.daemon.DaemonProcess.start(node, java -> java,
                    Map.of("PATH", bin + ":" + System.getenv("PATH")), killedArgs.toArray(String[]::new))) {
                exit = first.awaitExit(Duration.ofSeconds(120));
                assertEquals(137, exit, "the first daemon was SIGKILLed mid cold start:\n" + first.log());
            }
            long killedAt = ms(t0);
            int partial = KernelDispatch.all(io.nftproxy.readback.KernelTableParser.parse(node.listTable(IpFamily.IPV4))).size();
            assertTrue(partial < SERVICES, "the kill left a partial table: " + partial + " Services dispatched");

            ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
            b.hostnameOverride = NODE;
            b.clusterCidrs = List.of(IpPrefix.parse("10.240.0.0/16"));
            config = b.build().validate();
            long t1 = System.nanoTime();
            try (io.nftproxy.it.daemon.DaemonProcess second = io.nftproxy.it.daemon.DaemonProcess.start(node, java -> java, Map.of(), args)) {
                await("the restarted daemon's /healthz says 200", Duration.ofSeconds(90), () -> healthzInNode(node) == 200 || !second.alive());
                assertTrue(second.alive(), second::log);
                long healthy = ms(t1);
                long matched = ClusterRender.of(api.proxyKubeconfig(), config, TableLayout.FAST, node).await(node, Duration.ofSeconds(30));
                assertTrue(second.alive(), second::log);
                System.out.printf("faults: SIGKILL mid cold start %d ms after the start, %d of %d Services in the kernel; "
                        + "restarted daemon healthy %d ms after its start, whole table equal to the render %d ms later%n",
                        killedAt, partial, SERVICES, healthy, matched);
            }
        }
    }

    /**
     * Fault 8: /proc/sys read-only for the daemon alone (a mount namespace of its own with /proc/sys remounted
     * read-only). When a conntrack sysctl must change, {@code run} exits at start naming it (kube-proxy fails the
     * same way; only an operator can fix it) and programs nothing; once the sysctls hold the wanted values (as
     * {@code run --init-only} in a privileged init container leaves them) it runs with /proc/sys read-only.
     */
    @Test
    void readOnlyProcSysExitsNamingTheSysctlOrRunsOnceTheValuesAreSet() throws Exception {
        node = KernelNamespace.create("rosys");
        node.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
        String[] args = childArgs("flat");
        java.util.function.UnaryOperator<List<String>> readOnlyProcSys = java -> {
            List<String> argv = new ArrayList<>(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c",
                    "mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && exec \"$@\"", "sh"));
            argv.addAll(java);
            return argv;
        };
        long t0 = System.nanoTime();
        String log;
        int exit;
        try (io.nftproxy.it.daemon.DaemonProcess d = io.nftproxy.it.daemon.DaemonProcess.start(node, readOnlyProcSys, Map.of(), args)) {
            exit = d.awaitExit(Duration.ofSeconds(90));
            log = d.log();
        }
        System.out.printf("faults: read-only /proc/sys: exit %d after %d ms: %s%n", exit, ms(t0),
                log.lines().filter(l -> l.contains("conntrack")).findFirst().orElse(log));
        assertTrue(exit == 1 || exit == 4, "exit code for an unwritable sysctl (1, or 4 for permission denied):\n" + log);
        assertTrue(log.contains("nf_conntrack_tcp_timeout"), "the sysctl is named:\n" + log);
        assertFalse(node.nftOut("list", "tables").contains("kube-proxy"), "nothing programmed");

        List<String> initOnly = new ArrayList<>(List.of(args));
        initOnly.add("--init-only");
        try (io.nftproxy.it.daemon.DaemonProcess init = io.nftproxy.it.daemon.DaemonProcess.start(node, java -> java, Map.of(),
                initOnly.toArray(String[]::new))) {
            assertEquals(0, init.awaitExit(Duration.ofSeconds(90)), init::log);
        }
        long t1 = System.nanoTime();
        try (io.nftproxy.it.daemon.DaemonProcess d = io.nftproxy.it.daemon.DaemonProcess.start(node, readOnlyProcSys, Map.of(), args)) {
            await("/healthz 200 with /proc/sys read-only", Duration.ofSeconds(90), () -> healthzInNode(node) == 200 || !d.alive());
            assertTrue(d.alive(), d::log);
            long healthy = ms(t1);
            ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
            b.hostnameOverride = NODE;
            b.clusterCidrs = List.of(IpPrefix.parse("10.240.0.0/16"));
            config = b.build().validate();
            long matched = ClusterRender.of(api.proxyKubeconfig(), config, TableLayout.FLAT, node).await(node, Duration.ofSeconds(30));
            assertTrue(d.alive(), d::log);
            System.out.printf("faults: read-only /proc/sys after --init-only: healthy %d ms after the start, whole table equal to "
                    + "the render %d ms later%n", healthy, matched);
        }
    }

    /**
     * {@code run}'s arguments for a child daemon in {@link #node}, reaching the API server through a byte relay
     * listening on the node namespace's loopback; {@code --healthz-bind-address 127.0.0.1:10256} there.
     */
    private String[] childArgs(String layout) throws Exception {
        ServerSocket listener = node.handle().call(() -> new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
        ApiRelay pass = new ApiRelay(api.url(), listener);
        cleanup.add(pass);
        Path kubeconfig = Files.createTempFile("nftp-faults-", ".kubeconfig");
        cleanup.add(() -> Files.deleteIfExists(kubeconfig));
        Files.writeString(kubeconfig, Files.readString(api.proxyKubeconfig()).replace(api.url().toString(), pass.url().toString()));
        return new String[] {"--kubeconfig", kubeconfig.toString(), "--hostname-override", NODE, "--cluster-cidr", "10.240.0.0/16",
                "--table-layout", layout, "--healthz-bind-address", "127.0.0.1:10256", "--metrics-bind-address", "127.0.0.1:10249"};
    }

    private static int healthzInNode(KernelNamespace ns) {
        try {
            KernelNamespace.Result r = ns.exec(Duration.ofSeconds(10), null, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                    "--max-time", "3", "http://127.0.0.1:10256/healthz");
            return Integer.parseInt(r.stdout().strip());
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (var s = Files.walk(root)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }

    /**
     * Fault 6: every call into nft hangs for 15 s (a libnftables call that does not return), while a Service is
     * added on the API server. /healthz and /livez turn 503 within seconds, naming the wait; once nft answers again
     * the change is programmed and both say 200. (HangingNftKernelTest covers an nft that hangs at start, in exec mode.)
     */
    @Test
    void nftHangingAfterTheFirstSyncTurnsHealthzAndLosesNoChange() throws Exception {
        prepareNode("nfthang");
        FaultyNft[] nft = new FaultyNft[1];
        startDaemon(TableLayout.DEFAULT, Clock.systemUTC(), real -> nft[0] = new FaultyNft(real));
        assertTrue(daemon.awaitFirstSync(Duration.ofSeconds(60)), "first sync");
        render().await(node, Duration.ofSeconds(30));
        nft[0].stall();
        long t0 = System.nanoTime();
        String added = newService(2);
        String[] body = new String[1];
        await("/healthz says 503 naming the hanging nft", Duration.ofSeconds(30), () -> {
            try {
                HttpResponse<String> r = get("/healthz");
                body[0] = r.body();
                return r.statusCode() == 503 && r.body().contains("waiting for nft");
            } catch (Exception e) {
                return false;
            }
        });
        long unhealthy = ms(t0);
        // /livez follows /healthz once a sync happened (as kube-proxy's does): a liveness probe restarts a daemon
        // whose nft call never returns, the one remedy for a hung library call.
        while (ms(t0) < 15_000) {
            assertEquals(503, status("/livez"), "/livez while nft hangs");
            assertEquals(503, status("/healthz"), "/healthz while nft hangs");
            Thread.sleep(1_000);
        }
        nft[0].release();
        long t1 = System.nanoTime();
        render().await(node, Duration.ofSeconds(30));
        await("/healthz 200 again", Duration.ofSeconds(10), () -> {
            try {
                return status("/healthz") == 200;
            } catch (Exception e) {
                return false;
            }
        });
        System.out.printf("faults: nft hung 15 s: /healthz 503 after %d ms (%s); whole table (with %s) equal to the render %d ms "
                + "after nft answered again%n", unhealthy, body[0].strip().replace('\n', ' '), added, ms(t1));
    }

    /**
     * Fault 10: the wall clock steps back an hour right after a sync flushed a deleted Service's chains (the fast
     * layout has chains per Service), before their grace ran out. The flushed chains must still go within seconds,
     * and later changes must arrive; /healthz and /livez stay 200.
     */
    @Test
    void wallClockSteppedBackAnHourDelaysNothing() throws Exception {
        prepareNode("clock");
        SteppedClock clock = new SteppedClock();
        FaultyNft[] nft = new FaultyNft[1];
        startDaemon(TableLayout.FAST, clock, real -> nft[0] = new FaultyNft(real));
        assertTrue(daemon.awaitFirstSync(Duration.ofSeconds(60)), "first sync");
        render().await(node, Duration.ofSeconds(30));
        nft[0].afterCommitOf("flush chain ip kube-proxy service-", () -> clock.step(Duration.ofHours(-1)));
        deleteService(20);
        await("a deleted Service's chains were flushed", Duration.ofSeconds(30), nft[0]::fired);
        long t0 = System.nanoTime();
        render().await(node, Duration.ofSeconds(15));
        assertEquals(200, status("/livez"), "/livez after the clock stepped back");
        assertEquals(200, status("/healthz"), "/healthz after the clock stepped back");
        String added = newService(2);
        deleteService(21);
        long t1 = System.nanoTime();
        render().await(node, Duration.ofSeconds(15));
        assertEquals(200, status("/healthz"));
        System.out.printf("faults: clock stepped back 1 h between a flush and its chains' delete: whole table equal to the render "
                + "%d ms after the step; later changes (%s added, s21 deleted) %d ms%n", ms(t0), added, ms(t1));
    }

    // ---------------------------------------------------------------- cluster changes, made on the API server directly

    /** A new Service of {@code endpoints} endpoints (and its slice); returns its name. */
    private static String newService(int endpoints) {
        int n = NAMES.incrementAndGet();
        String name = "f" + n;
        List<String> ips = new ArrayList<>();
        for (int e = 0; e < endpoints; e++) ips.add("10.254." + (n % 250) + "." + (e + 1));
        admin.services().inNamespace(NS).resource(ApiServices.clusterIP(NS, name, 80, 8080)).create();
        admin.discovery().v1().endpointSlices().inNamespace(NS).resource(DaemonAgainstApiServerTest.slice(NS, name, name + "-1", 8080, ips)).create();
        return name;
    }

    private static void deleteService(int k) {
        admin.services().inNamespace(NS).withName("s" + k).delete();
        admin.discovery().v1().endpointSlices().inNamespace(NS).withName("s" + k + "-1").delete();
    }

    private static void moveEndpoints(int k, String ip) {
        admin.discovery().v1().endpointSlices().inNamespace(NS).withName("s" + k + "-1").edit(s -> new EndpointSliceBuilder(s)
                .withEndpoints().addNewEndpoint().withAddresses(ip).withNewConditions().withReady(true).endConditions().endEndpoint().build());
    }

    // ---------------------------------------------------------------- daemon

    private void prepareNode(String tag) throws Exception {
        node = KernelNamespace.create(tag);
        node.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
        relay = new FaultRelay(api.url(), api.certificates());
    }

    private void startDaemon() throws Exception { startDaemon(TableLayout.DEFAULT, Clock.systemUTC(), nft -> nft); }

    /**
     * The daemon, reaching the API server through the relay, writing the kernel through {@code wrap} of the real
     * client, reading the time from {@code clock}; returns without waiting for its first sync.
     */
    private void startDaemon(TableLayout layout, Clock clock, java.util.function.UnaryOperator<NftClient> wrap) throws Exception {
        this.layout = layout;
        Path kubeconfig = Files.createTempFile("nftp-faults-", ".kubeconfig");
        cleanup.add(() -> Files.deleteIfExists(kubeconfig));
        Files.writeString(kubeconfig, Files.readString(api.proxyKubeconfig()).replace(api.url().toString(), relay.url().toString()));
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = NODE;
        b.clusterCidrs = List.of(IpPrefix.parse("10.240.0.0/16"));
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            b.healthzBindAddress = new InetSocketAddress("127.0.0.1", free.getLocalPort());
        }
        b.metricsBindAddress = new InetSocketAddress("127.0.0.1", 0);
        b.kubeconfig = kubeconfig;
        b.tableLayout = layout;
        config = b.build().validate();
        OwnProcesses own = OwnProcesses.thisProcess();
        NftClient nft = wrap.apply(NftClients.createInNamespace(NftClients.Mode.AUTO, node.handle(), own::registerChild).client());
        daemon = new ProxyDaemon(new ProxyDaemon.Options(config, io.nftproxy.daemon.NodeNetwork.namespace(node.handle()), false),
                nft, own, new SdNotify(Map.of()), clock);
        daemon.start(store -> {
            source = new KubernetesSource(ApiServer.fromKubeconfig(kubeconfig), store, LAG_PROBE, KubernetesSource.DEFAULT_NODE_WAIT);
            source.start(NODE);
            return source;
        });
    }

    private int status(String path) throws Exception { return get(path).statusCode(); }

    private HttpResponse<String> get(String path) throws Exception {
        InetSocketAddress a = daemon.serverAddresses().get(0);
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.getPort() + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private ClusterRender render() throws Exception { return ClusterRender.of(api.proxyKubeconfig(), config, layout, node); }

    /**
     * The real kernel client with two faults to inject: every call can be made to hang (as a libnftables call that
     * never returns) until released, and an action can run right after the first transaction whose script contains
     * a given text was committed.
     */
    private static final class FaultyNft implements NftClient {
        private final NftClient delegate;
        private volatile java.util.concurrent.CountDownLatch stall;
        private volatile String trigger;
        private volatile Runnable action;

        FaultyNft(NftClient delegate) { this.delegate = delegate; }

        void stall() { stall = new java.util.concurrent.CountDownLatch(1); }

        void release() {
            java.util.concurrent.CountDownLatch l = stall;
            stall = null;
            if (l != null) l.countDown();
        }

        void afterCommitOf(String text, Runnable then) {
            action = then;
            trigger = text;
        }

        boolean fired() { return trigger == null && action == null; }

        private void hang() {
            java.util.concurrent.CountDownLatch l = stall;
            if (l == null) return;
            try {
                if (!l.await(5, java.util.concurrent.TimeUnit.MINUTES)) throw new IllegalStateException("stalled for 5 minutes");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override public void apply(io.nftproxy.nft.Transaction tx) {
            hang();
            delegate.apply(tx);
            String t = trigger;
            if (t != null && tx.script(delegate.capabilities()).contains(t)) {
                Runnable a = action;
                trigger = null;
                action = null;
                a.run();
            }
        }

        @Override public String listTableJson(IpFamily family) {
            hang();
            return delegate.listTableJson(family);
        }

        @Override public io.nftproxy.nft.Capabilities capabilities() { return delegate.capabilities(); }

        @Override public String describe() { return "stalling " + delegate.describe(); }

        @Override public void close() { delegate.close(); }
    }

    /** The system clock plus an offset a test can step. */
    private static final class SteppedClock extends Clock {
        private volatile Duration offset = Duration.ZERO;

        void step(Duration by) { offset = offset.plus(by); }

        @Override public java.time.ZoneId getZone() { return java.time.ZoneOffset.UTC; }

        @Override public Clock withZone(java.time.ZoneId zone) { return this; }

        @Override public java.time.Instant instant() { return java.time.Instant.now().plus(offset); }
    }

    private static void await(String what, Duration limit, java.util.function.BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError(what + ": not within " + limit.toSeconds() + " s");
            Thread.sleep(50);
        }
    }

    private static long ms(long t0) { return (System.nanoTime() - t0) / 1_000_000; }
}
