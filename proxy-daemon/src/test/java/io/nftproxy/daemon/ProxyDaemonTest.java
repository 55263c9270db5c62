package io.nftproxy.daemon;

import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.conntrack.CleanupReport;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.monitor.TableChange;
import io.nftproxy.netlink.monitor.TableChangeListener;
import io.nftproxy.netlink.nft.FakeNftClient;
import io.nftproxy.nft.Chain;
import io.nftproxy.nft.Verb;
import io.nftproxy.service.Endpoint;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.ProxyState;
import io.nftproxy.systemd.SdNotify;
import io.nftproxy.sync.ManualScheduler;
import io.nftproxy.sync.SyncEngine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

import static io.nftproxy.TestClusters.NODE;
import static io.nftproxy.TestClusters.OTHER_NODE;
import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The daemon without root and without a kernel: the fake nft client, a network that records what the daemon asks
 * of it, and a manual scheduler that decides when syncs run. What it checks is the daemon's own job: the start gate
 * and health, the health-check NodePort servers, conntrack follow-ups, tamper repair and the stale-chain follow-up.
 */
class ProxyDaemonTest {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final Duration MIN_SYNC = Duration.ofMillis(100);

    private final ManualScheduler scheduler = new ManualScheduler();
    private final long origin = scheduler.nanoTime();
    private final Clock clock = new Clock() {
        @Override public ZoneId getZone() { return ZoneOffset.UTC; }
        @Override public Clock withZone(ZoneId zone) { return this; }
        @Override public Instant instant() { return T0.plusNanos(scheduler.nanoTime() - origin); }
    };
    private final FakeNftClient fake = new FakeNftClient();
    private final RecordingNetwork network = new RecordingNetwork();
    private final HttpClient http = HttpClient.newHttpClient();
    private ProxyDaemon daemon;
    private int hcnp;

    /** Answers for the node's network and remembers what it was asked. */
    private static class RecordingNetwork implements NodeNetwork {
        final List<TableChangeListener> monitors = new ArrayList<>();
        final List<ProxyState> conntrackV4 = new ArrayList<>();

        @Override public AutoCloseable lock() { return () -> { }; }

        @Override public List<IpAddress> interfaceAddresses() { return List.of(IpAddress.parse("127.0.0.1")); }

        @Override public AutoCloseable monitorTables(OwnProcesses own, io.nftproxy.netlink.monitor.CommitLedger ledger, TableChangeListener listener) {
            monitors.add(listener);
            return () -> monitors.remove(listener);
        }

        @Override public AutoCloseable monitorAddresses(Runnable onChange, Consumer<Exception> onFailure) { return () -> { }; }

        @Override public CleanupReport cleanConntrack(ProxyState v4, ProxyState v6) {
            conntrackV4.add(v4);
            return new CleanupReport(List.of());
        }

        @Override public <T> T call(Callable<T> task) throws Exception { return task.call(); }

        @Override public String describe() { return "recording network"; }
    }

    @BeforeEach
    void start() throws Exception {
        hcnp = freeNodePort();
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = NODE;
        // Port 0 means "no server" here, as in kube-proxy's configuration.
        b.healthzBindAddress = new InetSocketAddress("127.0.0.1", freePort());
        b.metricsBindAddress = new InetSocketAddress("127.0.0.1", freePort());
        b.minSyncPeriod = MIN_SYNC;
        // Loopback addresses never take NodePort traffic; "every address" makes the health-check servers reachable.
        b.nodePortAddresses = new io.nftproxy.config.NodePortAddresses(false, List.of(io.nftproxy.net.IpPrefix.parse("0.0.0.0/0")));
        ProxyConfig.Builder node = b.build().validate().toBuilder();
        // Loopback as the node IP, which validate() refuses for an operator's --node-ip: set after validation.
        node.nodeIPs = List.of(IpAddress.parse("127.0.0.1"));
        ProxyConfig config = node.build();
        daemon = new ProxyDaemon(new ProxyDaemon.Options(config, network, true),
                fake, OwnProcesses.thisProcess(), new SdNotify(Map.of()), clock, scheduler);
        daemon.start(store -> () -> { });
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** A free port in the NodePort range, which validation requires of a health-check NodePort. */
    private static int freeNodePort() throws IOException {
        for (int p = 30000 + (int) (ProcessHandle.current().pid() % 2000); p < 32768; p++) {
            try (ServerSocket s = new ServerSocket(p, 1, java.net.InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException busy) {
                // try the next one
            }
        }
        throw new IOException("no free port in the NodePort range");
    }

    @AfterEach
    void stop() {
        if (daemon != null) daemon.close();
    }

    private TestClusters clusterOf(String lbEndpointNode, String... udpEndpoints) {
        TestClusters c = cluster()
                .service(svc("web", "lb").type("LoadBalancer").clusterIP("172.30.0.10").port("http", "TCP", 80, 30080)
                        .lbIngress("203.0.113.10").externalLocal().healthCheckNodePort(hcnp).build())
                .slice(slice("web", "lb", "lb-1").port("http", "TCP", 8080)
                        .ready("10.180.0.1", lbEndpointNode).ready("10.180.0.2", lbEndpointNode).build())
                .service(svc("dns", "udp").clusterIP("172.30.0.53").port("dns", "UDP", 53).build());
        TestClusters.Slice udp = slice("dns", "udp", "udp-1").port("dns", "UDP", 53);
        for (String ip : udpEndpoints) udp.ready(ip, OTHER_NODE);
        return c.slice(udp.build());
    }

    /** Hands the store a whole new cluster, as a manifest source does, and lets the sync loop run what is due. */
    private void apply(ClusterSnapshot s) {
        daemon.store().replaceAll(s);
        daemon.store().servicesListed();
        daemon.store().endpointSlicesListed();
        settle();
    }

    private void settle() { scheduler.advance(MIN_SYNC.multipliedBy(2)); }

    private HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private int healthzPort() { return daemon.serverAddresses().get(0).getPort(); }

    private String metrics() throws Exception { return get(daemon.serverAddresses().get(1).getPort(), "/metrics").body(); }

    /**
     * run --once: the same daemon, its sync once on the calling thread; both tables and the conntrack follow-up, and
     * nothing that would outlive it: no lock, no server, no monitor, and no health-check NodePort server.
     */
    @Test
    void runOnceSyncsOnceWithTheConntrackFollowUpAndStartsNothing() throws Exception {
        List<String> asked = new ArrayList<>();
        RecordingNetwork quiet = new RecordingNetwork() {
            @Override public AutoCloseable lock() {
                asked.add("lock");
                return () -> { };
            }

            @Override public AutoCloseable monitorAddresses(Runnable onChange, Consumer<Exception> onFailure) {
                asked.add("address monitor");
                return () -> { };
            }

            @Override public <T> T call(Callable<T> task) throws Exception {
                asked.add("call");
                return task.call();
            }
        };
        FakeNftClient once = new FakeNftClient();
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = NODE;
        ProxyConfig config = b.validate();
        try (ProxyDaemon d = new ProxyDaemon(new ProxyDaemon.Options(config, quiet, true), once, OwnProcesses.thisProcess(), new SdNotify(Map.of()), clock, scheduler)) {
            SyncEngine.Report r = d.runOnce(clusterOf(NODE, "10.180.1.1").snapshot());
            assertTrue(r.result().success(), r.result().toString());
            assertEquals(2, r.result().families().size());
            for (IpFamily f : IpFamily.values()) assertTrue(once.dump(f) != null, f.toString());
            assertTrue(r.conntrack() != null, "stale UDP entries looked for after the sync");
            assertEquals(1, quiet.conntrackV4.size());
            assertEquals(List.of(), d.serverAddresses());
            assertEquals(List.of(), quiet.monitors);
            // Calls on the network's thread are the generation reads around the commit; nothing is taken or started.
            assertEquals(List.of(), asked.stream().filter(a -> !a.equals("call")).toList());
        }
    }

    /** kube-proxy's /configz on the metrics server: the effective configuration under the API group's name. */
    @Test
    void configzServesTheEffectiveConfiguration() throws Exception {
        HttpResponse<String> r = get(daemon.serverAddresses().get(1).getPort(), "/configz");
        assertEquals(200, r.statusCode());
        assertEquals("application/json", r.headers().firstValue("Content-Type").orElse("").split(";")[0]);
        tools.jackson.databind.JsonNode c = tools.jackson.databind.json.JsonMapper.builder().build().readTree(r.body()).get("kubeproxy.config.k8s.io");
        assertEquals("nftables", c.get("mode").asString());
        assertEquals(NODE, c.get("hostnameOverride").asString());
        assertEquals(GoDurationText.of(MIN_SYNC), c.get("nftables").get("minSyncPeriod").asString());
        assertEquals(32768, c.get("conntrack").get("maxPerCore").asInt());
        assertEquals("0.0.0.0/0", c.get("nodePortAddresses").get(0).asString());
        assertEquals(io.nftproxy.render.TableLayout.DEFAULT.cliName(), c.get("nftproxy").get("tableLayout").asString());
        assertEquals(false, c.get("nftproxy").get("refuseExternalIPOverlaps").asBoolean());
    }

    /** Go's spelling of a duration, as the configuration writes it. */
    private static final class GoDurationText {
        static String of(Duration d) { return io.nftproxy.config.GoDuration.format(d); }
    }

    @Test
    void nothingIsProgrammedAndHealthzIs503UntilTheWholeClusterIsKnown() throws Exception {
        settle();
        assertEquals(0, fake.applyCalls(), "no sync before the store is ready");
        assertEquals(503, get(healthzPort(), "/healthz").statusCode());
        assertEquals(200, get(healthzPort(), "/livez").statusCode(), "restarting would not make the cluster appear");

        apply(clusterOf(NODE, "10.180.1.1", "10.180.1.2").snapshot());
        assertTrue(daemon.awaitFirstSync(Duration.ZERO));
        assertEquals(200, get(healthzPort(), "/healthz").statusCode());
        assertTrue(fake.dump(IpFamily.IPV4).elements("service-ips").size() >= 2, "both services programmed");
    }

    @Test
    void healthCheckNodePortsFollowTheLocalEndpoints() throws Exception {
        apply(clusterOf(NODE, "10.180.1.1").snapshot());
        HttpResponse<String> two = get(hcnp, "/");
        assertEquals(200, two.statusCode(), two.body());
        assertTrue(two.body().contains("\"localEndpoints\": 2"), two.body());

        apply(clusterOf(OTHER_NODE, "10.180.1.1").snapshot());
        HttpResponse<String> none = get(hcnp, "/");
        assertEquals(503, none.statusCode(), "a load balancer must drain this node: " + none.body());
        assertTrue(none.body().contains("\"localEndpoints\": 0"), none.body());
    }

    @Test
    void aRemovedUdpEndpointIsHandedToConntrackCleanup() throws Exception {
        apply(clusterOf(NODE, "10.180.1.1", "10.180.1.2").snapshot());
        assertTrue(daemon.awaitFirstSync(Duration.ZERO), "synced; applied " + fake.applyCalls());
        int before = network.conntrackV4.size();
        apply(clusterOf(NODE, "10.180.1.1").snapshot());
        assertEquals(before + 1, network.conntrackV4.size(), "one cleanup after the sync that removed the endpoint");
        List<String> ips = new ArrayList<>();
        for (List<Endpoint> eps : network.conntrackV4.get(network.conntrackV4.size() - 1).endpoints().values()) {
            for (Endpoint e : eps) ips.add(e.ip().toString());
        }
        assertTrue(ips.contains("10.180.1.1") && !ips.contains("10.180.1.2"), ips.toString());

        apply(clusterOf(NODE, "10.180.1.1").snapshot());
        assertEquals(before + 1, network.conntrackV4.size(), "nothing changed for UDP: no cleanup");
    }

    @Test
    void monitorOverflowsAreReadBackWithoutBlamingAnotherWriter() throws Exception {
        apply(clusterOf(NODE, "10.180.1.1").snapshot());
        var want = fake.dump(IpFamily.IPV4);
        fake.flushChain(IpFamily.IPV4, "services");
        long reads = fake.readCalls();
        // Ten overflows in a row, as a big own sync on a busy node can cause: each is a read-back, none is a foreign
        // writer, so the back-off never starts and /healthz stays healthy.
        for (int i = 0; i < 10; i++) {
            for (TableChangeListener l : List.copyOf(network.monitors)) l.onTableChange(overflow());
            settle();
        }
        assertEquals(want, fake.dump(IpFamily.IPV4), "repaired by read-back");
        assertTrue(fake.readCalls() >= reads + 2, "read back");
        assertTrue(daemon.health().status().healthy(), daemon.health().status().toString());
        assertEquals(null, daemon.health().status().cause());
    }

    private static TableChange overflow() {
        return new TableChange(TableChange.Origin.OVERFLOW, Set.of(IpFamily.IPV4, IpFamily.IPV6), Set.of(), 0, -1, 0, "",
                "notifications dropped: netlink socket overrun (ENOBUFS)", System.nanoTime());
    }

    @Test
    void anotherWritersChangeIsReadBackAndRepaired() throws Exception {
        apply(clusterOf(NODE, "10.180.1.1").snapshot());
        var want = fake.dump(IpFamily.IPV4);
        fake.flushChain(IpFamily.IPV4, "services");
        long reads = fake.readCalls();
        for (TableChangeListener l : List.copyOf(network.monitors)) {
            l.onTableChange(new TableChange(TableChange.Origin.FOREIGN, Set.of(IpFamily.IPV4), Set.of(), 1, 7, 4242, "nft", "", System.nanoTime()));
        }
        settle();
        assertEquals(reads + 2, fake.readCalls(), "both tables read back once");
        assertEquals(want, fake.dump(IpFamily.IPV4), "repaired");
        assertTrue(metrics().contains("nftproxy_tamper_resyncs_total{ip_family=\"IPv4\"} 1.0"));
    }

    /**
     * nftproxy's own counters on a real scrape: a skipped address is counted once per object, not once per sync, and
     * the commands counter moves by what a sync sent, not at all for a sync that had nothing to send.
     */
    @Test
    void invalidObjectsAndTransactionCommandsAreCountedAsTheSyncsGo() throws Exception {
        apply(clusterOf(NODE, "10.180.1.1").service(svc("web", "bad").clusterIP("172.30.0.11").port("http", "TCP", 80)
                .externalIP("192.0.2.300").build()).snapshot());
        String invalid = "nftproxy_invalid_objects_total{field=\"spec.externalIPs\",kind=\"Service\"} 1.0";
        assertTrue(metrics().lines().anyMatch(invalid::equals), metrics());
        double first = commands(metrics());
        assertTrue(first > 0, "the first sync sent the tables");

        apply(clusterOf(NODE, "10.180.1.1").service(svc("web", "bad").clusterIP("172.30.0.11").port("http", "TCP", 80)
                .externalIP("192.0.2.300").build()).snapshot());
        assertTrue(metrics().lines().anyMatch(invalid::equals), "the same bad address is not counted again");
        assertEquals(first, commands(metrics()), "nothing changed, nothing sent");

        apply(clusterOf(NODE, "10.180.1.1", "10.180.1.2").service(svc("web", "bad").clusterIP("172.30.0.11")
                .port("http", "TCP", 80).externalIP("192.0.2.300").build()).snapshot());
        assertTrue(commands(metrics()) > first, "a new endpoint is sent");
    }

    /**
     * issue 26: each sync is timed in kube-proxy's histogram for its level. A Node change rebuilds every Service
     * without reading the kernel back: a full sync for kube-proxy, never a partial one. The timestamps read the
     * daemon's clock.
     */
    @Test
    void eachSyncIsTimedInTheHistogramOfItsLevel() throws Exception {
        apply(clusterOf(NODE, "10.180.1.1").snapshot());
        assertEquals(1, sample(metrics(), "kubeproxy_sync_full_proxy_rules_duration_seconds_count"), "the first sync converges");
        assertEquals(0, sample(metrics(), "kubeproxy_sync_partial_proxy_rules_duration_seconds_count"));
        long reads = fake.readCalls();

        daemon.store().upsertNode(new io.nftproxy.cluster.NodeObject(new io.nftproxy.cluster.ObjectMeta(null, NODE,
                Map.of("topology.kubernetes.io/zone", "z1"), Map.of(), false), List.of(), List.of(), List.of()));
        settle();
        assertEquals(reads, fake.readCalls(), "a rebuild does not read the kernel");
        assertEquals(2, sample(metrics(), "kubeproxy_sync_full_proxy_rules_duration_seconds_count"), "a rebuild is a full sync");
        assertEquals(0, sample(metrics(), "kubeproxy_sync_partial_proxy_rules_duration_seconds_count"), "not a partial one");

        daemon.store().upsertService(svc("web", "more").clusterIP("172.30.0.12").port("http", "TCP", 80).build());
        settle();
        assertEquals(2, sample(metrics(), "kubeproxy_sync_full_proxy_rules_duration_seconds_count"));
        assertEquals(1, sample(metrics(), "kubeproxy_sync_partial_proxy_rules_duration_seconds_count"), "one Service: partial");
        assertEquals(clock.millis() / 1000.0, sample(metrics(), "kubeproxy_sync_proxy_rules_last_timestamp_seconds"), 1.0,
                "the daemon's clock, not the system's");
    }

    /** The IPv4 sample of {@code name} in a scrape; 0 when absent. */
    private static double sample(String scrape, String name) {
        return scrape.lines().filter(l -> l.startsWith(name + "{ip_family=\"IPv4\"} "))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst().orElse(0);
    }

    /** issue 26: the table layout set in the config file is what /configz shows, beside what --write-config-to writes. */
    @Test
    void configzShowsTheTableLayoutOfTheConfigFile() throws Exception {
        daemon.close();
        java.nio.file.Path file = java.nio.file.Files.createTempFile("nftproxy-layout", ".yaml");
        try {
            java.nio.file.Files.writeString(file, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                    + "nftproxy:\n  tableLayout: fast\n  refuseExternalIPOverlaps: true\n");
            ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
            b.hostnameOverride = NODE;
            io.nftproxy.config.ConfigFile.read(file, b);
            b.healthzBindAddress = new InetSocketAddress("127.0.0.1", freePort());
            b.metricsBindAddress = new InetSocketAddress("127.0.0.1", freePort());
            daemon = new ProxyDaemon(new ProxyDaemon.Options(b.validate(), network, true),
                    fake, OwnProcesses.thisProcess(), new SdNotify(Map.of()), clock, scheduler);
            daemon.start(store -> () -> { });
            HttpResponse<String> r = get(daemon.serverAddresses().get(1).getPort(), "/configz");
            tools.jackson.databind.JsonNode c = tools.jackson.databind.json.JsonMapper.builder().build().readTree(r.body())
                    .get("kubeproxy.config.k8s.io").get("nftproxy");
            assertEquals("fast", c.get("tableLayout").asString(), r.body());
            assertTrue(c.get("refuseExternalIPOverlaps").asBoolean(), r.body());
        } finally {
            java.nio.file.Files.deleteIfExists(file);
        }
    }

    private static double commands(String scrape) {
        return scrape.lines().filter(l -> l.startsWith("nftproxy_transaction_commands_total{ip_family=\"IPv4\"} "))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst().orElse(0);
    }

    @Test
    void aRemovedServicesChainIsDeletedByAFollowUpNobodyAskedForAndAFailedDeleteIsCounted() throws Exception {
        apply(clusterOf(NODE, "10.180.1.1").snapshot());
        // The LoadBalancer's external chain: its Local policy gives it chains in every table layout.
        String staleChain = fake.dump(IpFamily.IPV4).chains().keySet().stream()
                .filter(c -> c.startsWith("external-") && c.contains("web/lb/tcp/http")).findFirst().orElseThrow();
        apply(cluster().service(svc("dns", "udp").clusterIP("172.30.0.53").port("dns", "UDP", 53).build())
                .slice(slice("dns", "udp", "udp-1").port("dns", "UDP", 53).ready("10.180.1.1", OTHER_NODE).build()).snapshot());
        assertTrue(fake.dump(IpFamily.IPV4).chains().containsKey(staleChain), "flushed, not yet deleted");
        assertTrue(fake.dump(IpFamily.IPV4).rules(staleChain).isEmpty());

        fake.failWhen(tx -> tx.commands().stream().allMatch(c -> c.verb() == Verb.DELETE && c.object() instanceof Chain));
        long calls = fake.applyCalls();
        scheduler.advance(Duration.ofSeconds(2));
        assertTrue(fake.applyCalls() > calls, "the grace ran out and a sync ran without any request");
        String m = metrics();
        assertFalse(m.contains("kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total{ip_family=\"IPv4\"} 0.0"), m);
        assertTrue(m.contains("kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total{ip_family=\"IPv4\"}"), m);

        fake.failWhen(tx -> false);
        scheduler.advance(Duration.ofSeconds(5));
        assertFalse(fake.dump(IpFamily.IPV4).chains().containsKey(staleChain), "deleted once the kernel accepts it");
    }

    /**
     * The task after the first sync (the daemon's removal of kube-proxy's other modes' rules) waits for a sync that
     * programmed both tables: not after one the kernel refused for a family, and only once.
     */
    @Test
    void theTaskAfterTheFirstSyncWaitsForBothTablesAndRunsOnce() throws Exception {
        List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        daemon.afterFirstSync(() -> seen.add("ipv4 " + (fake.dump(IpFamily.IPV4) != null) + ", ipv6 " + (fake.dump(IpFamily.IPV6) != null)
                + ", first sync counted " + awaitedNow()));
        fake.failWhen(tx -> tx.family() == IpFamily.IPV6);
        apply(clusterOf(NODE, "10.180.1.1").snapshot());
        assertTrue(fake.dump(IpFamily.IPV4) != null && fake.dump(IpFamily.IPV6) == null, "IPv4 programmed, IPv6 refused");
        assertEquals(List.of(), seen, "a sync that failed for one family is not the first complete one");
        assertFalse(daemon.awaitFirstSync(Duration.ZERO));

        fake.failWhen(tx -> false);
        scheduler.advance(Duration.ofSeconds(5));
        assertEquals(List.of("ipv4 true, ipv6 true, first sync counted false"), seen,
                "after the first sync that programmed both tables, before it counts as done (READY)");
        assertTrue(daemon.awaitFirstSync(Duration.ZERO));
        apply(clusterOf(NODE, "10.180.1.1", "10.180.1.2").snapshot());
        assertEquals(1, seen.size(), "once");
    }

    private boolean awaitedNow() {
        try {
            return daemon.awaitFirstSync(Duration.ZERO);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
