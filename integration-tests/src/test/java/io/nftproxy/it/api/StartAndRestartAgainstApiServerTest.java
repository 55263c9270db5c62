package io.nftproxy.it.api;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.daemon.ProxyDaemon;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.nft.Transaction;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.readback.KernelTableParser;
import io.nftproxy.render.TableLayout;
import io.nftproxy.source.KubernetesSource;
import io.nftproxy.source.api.ApiServer;
import io.nftproxy.systemd.SdNotify;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Start-up and restart at a real cluster's size, against a real kube-apiserver holding 1,000 Services of two
 * endpoints each (one EndpointSlice apiece) and this node's Node object:
 * <ul>
 *   <li>the first sync holds every Service and every slice — one transaction, nothing partial before it — and
 *       /healthz says 503 until then;</li>
 *   <li>a restart with the table in place sends no command at all, and a poller reading {@code service-ips} all
 *       through the restart never sees a Service missing;</li>
 *   <li>a daemon started while the API server is down, or with a CA that did not sign the server's certificate,
 *       stays up (/livez 200, /healthz 503, the kernel untouched) and programs the cluster once it can reach it.</li>
 * </ul>
 */
class StartAndRestartAgainstApiServerTest {
    private static final String NODE = "node-1";
    private static final String NS = "nftp-scale";
    private static final int SERVICES = 1_000;

    private static ApiCluster cluster;
    private static ApiServerProcess api;
    /** {@code ip:80} of every Service in {@link #NS}, read from the API server once it holds them. */
    private static Set<String> ourClusterIps;
    private static KubernetesClient admin;

    private final List<AutoCloseable> cleanup = new ArrayList<>();
    private KernelNamespace node;

    @BeforeAll
    static void startApiServerWithAThousandServices() throws Exception {
        ApiCluster.assumeAvailable("StartAndRestartAgainstApiServerTest", KernelNamespace.unavailabilityCause(),
                ApiServerBinaries.unavailabilityCause());
        cluster = ApiCluster.start(ApiServerProcess.Options.defaults());
        api = cluster.api();
        admin = cluster.admin();
        cluster.namespace(NS).node(NODE, Map.of("topology.kubernetes.io/zone", "zone-a"));
        long ms = cluster.createServices(NS, SERVICES, n -> List.of("10.252." + (n / 100) + "." + (n % 100 * 2 + 1),
                "10.252." + (n / 100) + "." + (n % 100 * 2 + 2)));
        System.out.printf("created %d services x 2 endpoints through the API in %d ms%n", SERVICES, ms);
        ourClusterIps = admin.services().inNamespace(NS).list().getItems().stream()
                .map(svc -> svc.getSpec().getClusterIP() + ":80").collect(java.util.stream.Collectors.toSet());
    }

    @AfterAll
    static void stopApiServer() throws IOException {
        if (cluster != null) cluster.close();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = cleanup.size() - 1; i >= 0; i--) cleanup.get(i).close();
        if (node != null) node.close();
        if (api != null && !api.apiServerRunning()) api.startApiServer();
    }

    // ---------------------------------------------------------------- tests

    @Test
    void theFirstSyncHoldsTheWholeClusterAndHealthzSaysNoBeforeIt() throws Exception {
        node = KernelNamespace.create("start");
        Counting nft = counting();
        long t0 = System.nanoTime();
        Started d = start(api.proxyKubeconfig(), nft);
        List<Integer> beforeFirstSync = new ArrayList<>();
        while (!d.daemon.awaitFirstSync(Duration.ofMillis(20))) {
            int status = status(d, "/healthz");
            // A probe the first sync overtook proves nothing either way.
            if (!d.daemon.awaitFirstSync(Duration.ZERO)) beforeFirstSync.add(status);
            assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(60).toNanos(), "no first sync within 60 s");
        }
        long firstSyncMs = (System.nanoTime() - t0) / 1_000_000;
        // Whatever ran as the first sync is in the kernel now; a partial first sync would show fewer endpoints here.
        Map<String, Integer> endpoints = dnatCounts();
        int transactionsAtFirstSync = nft.transactions(IpFamily.IPV4);
        Thread.sleep(1_500);
        System.out.printf("start: first sync %d ms after start; %d /healthz probes before it, all %s; %d commands in %d transaction(s)%n",
                firstSyncMs, beforeFirstSync.size(), new java.util.TreeSet<>(beforeFirstSync), nft.commands.get(), transactionsAtFirstSync);

        assertEquals(SERVICES, endpoints.size(), "services programmed by the first sync");
        assertTrue(endpoints.values().stream().allMatch(n -> n == 2), "every service has both endpoints at the first sync");
        // One sync: one transaction, or the few parts KernelTable cuts a change over its budget into (units of a
        // few commands each, so at most one part more than the commands strictly need).
        int budget = io.nftproxy.sync.KernelTable.DEFAULT_COMMAND_BUDGET;
        int v4Commands = nft.familyCommands.get(IpFamily.IPV4).get();
        int fewestParts = Math.max(1, (v4Commands + budget - 1) / budget);
        assertTrue(transactionsAtFirstSync >= fewestParts && transactionsAtFirstSync <= fewestParts + 1,
                "the first sync is one sync for the IPv4 table: " + transactionsAtFirstSync + " transaction(s) for " + v4Commands + " commands");
        assertEquals(transactionsAtFirstSync, nft.transactions(IpFamily.IPV4), "nothing was left for a second sync to add");
        // The daemon marks the tables healthy when the sync's commits are done and opens the latch just after: the
        // last probe may fall in between and see 200. Only that one; every earlier probe must have said 503.
        List<Integer> beforeHealthy = beforeFirstSync.isEmpty() || beforeFirstSync.get(beforeFirstSync.size() - 1) != 200
                ? beforeFirstSync : beforeFirstSync.subList(0, beforeFirstSync.size() - 1);
        assertTrue(beforeHealthy.stream().allMatch(s -> s == 503), "/healthz before the first sync: " + beforeFirstSync);
        assertEquals(200, status(d, "/healthz"));
    }

    @Test
    void aRestartWithTheTableInPlaceSendsNothingAndNeverLosesAService() throws Exception {
        node = KernelNamespace.create("restart");
        Started first = start(api.proxyKubeconfig(), counting());
        assertTrue(first.daemon.awaitFirstSync(Duration.ofSeconds(60)), "first daemon synced");
        // Ours, and the API server's own default/kubernetes when something wrote its slice.
        awaitServiceIps(SERVICES, Duration.ofSeconds(30));
        int expectedServiceIps = ServiceIpsMap.count(node);
        String handles = node.nftOut("-a", "list", "table", "ip", "kube-proxy");

        // A poller reads service-ips as fast as nft lists it, from before the old daemon stops until after the new
        // one is healthy: the fewest Services it ever saw is what a packet could have met.
        try (ServiceIpsPoller poller = ServiceIpsPoller.start(node)) {
            Thread.sleep(300);
            first.close();
            long t0 = System.nanoTime();
            Counting nft = counting();
            Started second = start(api.proxyKubeconfig(), nft);
            assertTrue(second.daemon.awaitFirstSync(Duration.ofSeconds(60)), "restarted daemon synced");
            long healthy = (System.nanoTime() - t0) / 1_000_000;
            Thread.sleep(1_500);
            poller.stop();
            System.out.printf("restart: healthy %d ms after start; %d commands sent; fewest services seen in service-ips %d of %d over %d polls%n",
                    healthy, nft.commands.get(), poller.fewest(), expectedServiceIps, poller.polls());
            assertEquals(0, nft.commands.get(), "commands sent by the restarted daemon");
            assertEquals(expectedServiceIps, poller.fewest(), "fewest services in service-ips during the restart");
            assertTrue(poller.polls() > 5, "the poller ran");
            assertEquals(handles, node.nftOut("-a", "list", "table", "ip", "kube-proxy"), "every rule kept its handle");
        }
    }

    /**
     * An upgrade from a release whose default was the fast layout: the new daemon finds a fast table of 1,000
     * Services and moves every simple one to the flat maps. That is a large change, cut into parts; a poller reading
     * service-ips all along never sees fewer Services dispatched than before, and in the end every Service DNATs to
     * both its endpoints through the flat maps, with no service chain left.
     */
    @Test
    void anUpgradeFromTheFastLayoutNeverLosesAServiceAndEndsFlat() throws Exception {
        node = KernelNamespace.create("upgrade");
        Started first = start(api.proxyKubeconfig(), counting(), TableLayout.FAST);
        assertTrue(first.daemon.awaitFirstSync(Duration.ofSeconds(60)), "first daemon synced");
        awaitServiceIps(SERVICES, Duration.ofSeconds(30));
        int expectedServiceIps = ServiceIpsMap.count(node);
        // Ours, and default/kubernetes when something wrote its slice.
        assertTrue(serviceChains().size() >= SERVICES, "the fast table has a chain per service");

        try (ServiceIpsPoller poller = ServiceIpsPoller.start(node)) {
            Thread.sleep(300);
            first.close();
            Counting nft = counting();
            Started second = start(api.proxyKubeconfig(), nft, TableLayout.FLAT);
            assertTrue(second.daemon.awaitFirstSync(Duration.ofSeconds(60)), "upgraded daemon synced");
            Map<String, Integer> dnat = Map.of();
            for (long end = System.nanoTime() + Duration.ofSeconds(30).toNanos(); System.nanoTime() < end; Thread.sleep(200)) {
                dnat = dnatCounts();
                if (dnat.size() == SERVICES && serviceChains().isEmpty()) break;
            }
            poller.stop();
            System.out.printf("upgrade fast -> flat: %d commands in %d transaction(s); fewest services seen in service-ips %d of %d over %d polls (%d across a commit, left out)%n",
                    nft.commands.get(), nft.transactions(IpFamily.IPV4), poller.fewest(), expectedServiceIps, poller.polls(), poller.acrossACommit());
            assertEquals(SERVICES, dnat.size(), "services DNATed after the upgrade");
            assertTrue(dnat.values().stream().allMatch(n -> n == 2), "both endpoints of every service");
            assertTrue(nft.transactions(IpFamily.IPV4) > 1, "the switch was cut into parts");
            assertTrue(poller.fewest() >= expectedServiceIps, "fewest services in service-ips during the upgrade: " + poller.fewest());
            assertTrue(poller.polls() > 5, "the poller ran");
            assertEquals(List.of(), serviceChains(), "the simple services' chains are gone once their grace ran out");
            assertTrue(node.listTableText(IpFamily.IPV4).contains("flat-endpoints-tcp-2"), "the flat maps hold the services");
        }
    }

    @Test
    void startedWhileTheApiServerIsDownItWaitsAndProgramsTheClusterOnceItIsUp() throws Exception {
        node = KernelNamespace.create("down");
        api.stopApiServer();
        Started d = start(api.proxyKubeconfig(), counting());
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (d.source.problems().isEmpty() && System.nanoTime() < deadline) Thread.sleep(50);
        Thread.sleep(3_000);
        assertTrue(d.source.problems().values().stream().anyMatch(p -> p.contains("connection refused")), d.source.problems().toString());
        assertEquals(200, status(d, "/livez"), "alive while waiting for the API server");
        assertEquals(503, status(d, "/healthz"), "not healthy before the first sync");
        assertFalse(node.nftOut("list", "tables").contains("kube-proxy"), "nothing programmed before the cluster is known");

        long t0 = System.nanoTime();
        api.startApiServer();
        assertTrue(d.daemon.awaitFirstSync(Duration.ofSeconds(90)), "first sync after the API server came up");
        System.out.printf("down at start: first sync %d ms after the API server was started%n", (System.nanoTime() - t0) / 1_000_000);
        assertEquals(SERVICES, dnatCounts().size());
        assertTrue(d.source.problems().isEmpty(), "recovered: " + d.source.problems());
    }

    @Test
    void aWrongCaIsRetriedUntilTheKubeconfigsCaIsPutRight() throws Exception {
        node = KernelNamespace.create("ca");
        Path dir = Files.createTempDirectory("nftp-ca-");
        cleanup.add(() -> deleteTree(dir));
        LoopbackCertificates other = LoopbackCertificates.generate(dir.resolve("other"));
        Path ca = dir.resolve("ca.crt");
        Files.copy(other.caCert(), ca);
        Path kubeconfig = dir.resolve("kubeconfig");
        Files.writeString(kubeconfig, Files.readString(api.proxyKubeconfig()).replace(api.caCertificate().toString(), ca.toString()));

        Started d = start(kubeconfig, counting());
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (d.source.problems().isEmpty() && System.nanoTime() < deadline) Thread.sleep(50);
        assertTrue(d.source.problems().values().stream().anyMatch(p -> p.contains("not trusted")), d.source.problems().toString());
        assertEquals(200, status(d, "/livez"));
        assertEquals(503, status(d, "/healthz"));

        long t0 = System.nanoTime();
        Files.copy(api.caCertificate(), ca, StandardCopyOption.REPLACE_EXISTING);
        assertTrue(d.daemon.awaitFirstSync(Duration.ofSeconds(90)), "first sync once the CA is right");
        System.out.printf("wrong CA: first sync %d ms after the CA file was put right%n", (System.nanoTime() - t0) / 1_000_000);
        assertEquals(SERVICES, dnatCounts().size());
    }

    // ---------------------------------------------------------------- daemon

    private record Started(ProxyDaemon daemon, KubernetesSource source) implements AutoCloseable {
        @Override public void close() { daemon.close(); }
    }

    private Started start(Path kubeconfig, NftClient nft) throws Exception {
        return start(kubeconfig, nft, TableLayout.DEFAULT);
    }

    private Started start(Path kubeconfig, NftClient nft, TableLayout layout) throws Exception {
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = NODE;
        b.clusterCidrs = List.of(IpPrefix.parse("10.240.0.0/16"));
        // Port 0 turns a server off, as in kube-proxy: take a free loopback port for /healthz.
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            b.healthzBindAddress = new InetSocketAddress("127.0.0.1", free.getLocalPort());
        }
        b.metricsBindAddress = new InetSocketAddress("127.0.0.1", 0);
        b.kubeconfig = kubeconfig;
        b.tableLayout = layout;
        ProxyConfig config = b.build().validate();
        ProxyDaemon daemon = new ProxyDaemon(new ProxyDaemon.Options(config, io.nftproxy.daemon.NodeNetwork.namespace(node.handle()), false), nft,
                OwnProcesses.thisProcess(), new SdNotify(Map.of()), Clock.systemUTC());
        KubernetesSource[] source = new KubernetesSource[1];
        daemon.start(store -> {
            source[0] = new KubernetesSource(ApiServer.fromKubeconfig(kubeconfig), store);
            source[0].start(NODE);
            return source[0];
        });
        Started s = new Started(daemon, source[0]);
        cleanup.add(s);
        return s;
    }

    private Counting counting() throws IOException {
        OwnProcesses own = OwnProcesses.thisProcess();
        return new Counting(NftClients.createInNamespace(NftClients.Mode.AUTO, node.handle(), own::registerChild).client());
    }

    /** The kernel client, counting what it is asked to apply. */
    private static final class Counting implements NftClient {
        final NftClient delegate;
        final AtomicInteger commands = new AtomicInteger();
        final Map<IpFamily, AtomicInteger> transactions = Map.of(IpFamily.IPV4, new AtomicInteger(), IpFamily.IPV6, new AtomicInteger());
        final Map<IpFamily, AtomicInteger> familyCommands = Map.of(IpFamily.IPV4, new AtomicInteger(), IpFamily.IPV6, new AtomicInteger());

        Counting(NftClient delegate) { this.delegate = delegate; }

        int transactions(IpFamily f) { return transactions.get(f).get(); }

        @Override public void apply(Transaction tx) {
            delegate.apply(tx);
            if (tx.isEmpty()) return;
            commands.addAndGet(tx.size());
            familyCommands.get(tx.family()).addAndGet(tx.size());
            transactions.get(tx.family()).incrementAndGet();
        }

        @Override public String listTableJson(IpFamily family) { return delegate.listTableJson(family); }
        @Override public Capabilities capabilities() { return delegate.capabilities(); }
        @Override public String describe() { return delegate.describe(); }
        @Override public void close() { delegate.close(); }
    }

    private static int status(Started d, String path) throws Exception {
        InetSocketAddress a = d.daemon.serverAddresses().get(0);
        HttpResponse<Void> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + a.getPort() + path)).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding());
        return r.statusCode();
    }

    // ---------------------------------------------------------------- kernel

    /**
     * How many endpoints the kernel DNATs each of our Services' ClusterIP:80 to, by {@code ip:port}, traced through
     * the table read back from the kernel (in whatever layout it was written); Services it does not DNAT are left out.
     */
    private Map<String, Integer> dnatCounts() throws Exception {
        Map<String, Integer> out = new java.util.HashMap<>();
        KernelDispatch.all(KernelTableParser.parse(node.listTable(IpFamily.IPV4))).forEach((k, targets) -> {
            if (!targets.isEmpty() && ourClusterIps.contains(k)) out.put(k, targets.size());
        });
        return out;
    }

    /** The per-service chains ({@code service-<hash>-…}) the kernel's ip table holds. */
    private List<String> serviceChains() throws IOException {
        return node.listTableText(IpFamily.IPV4).lines().map(String::strip)
                .filter(l -> l.matches("chain service-[A-Z2-7]{8}-.*")).toList();
    }

    private void awaitServiceIps(int n, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (ServiceIpsMap.count(node) < n) {
            if (System.nanoTime() > deadline) throw new AssertionError("service-ips holds " + ServiceIpsMap.count(node) + ", not " + n);
            Thread.sleep(100);
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (var s = Files.walk(root)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }
}
