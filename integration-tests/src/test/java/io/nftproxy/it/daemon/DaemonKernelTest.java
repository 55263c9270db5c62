package io.nftproxy.it.daemon;

import io.nftproxy.config.ProxyConfig;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.daemon.ProxyDaemon;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.source.ManifestDirectorySource;
import io.nftproxy.systemd.SdNotify;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The daemon end to end on a real kernel: it runs in this JVM, acting on a throwaway network namespace, fed by a
 * watched copy of {@code examples/}. Tampering with its tables is repaired within a second (measured and printed),
 * a manifest edit converges, and stopping it leaves the rules in place.
 */
class DaemonKernelTest {
    /** The chain of demo/hello-sticky: its session affinity keeps its chains in every table layout. */
    private static final String STICKY = "service-4MXLGZVK-demo/hello-sticky/tcp/http";

    @TempDir Path dir;
    private KernelNamespace ns;
    private ProxyDaemon daemon;
    private int healthPort;

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailable();
    }

    @BeforeEach
    void start() throws Exception {
        ExampleManifests.copyTo(dir);
        ns = KernelNamespace.create("daemon");
        ns.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
        healthPort = ExampleManifests.freePort();
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = "k8s-node-1";
        b.clusterCidrs = List.of(IpPrefix.parse("172.20.0.0/16"));
        b.manifests = dir;
        b.healthzBindAddress = new InetSocketAddress("127.0.0.1", healthPort);
        b.metricsBindAddress = new InetSocketAddress("127.0.0.1", 0);
        ProxyConfig config = b.build().validate();
        OwnProcesses own = OwnProcesses.thisProcess();
        NftClient client = NftClients.createInNamespace(NftClients.Mode.AUTO, ns.handle(), own::registerChild).client();
        daemon = new ProxyDaemon(new ProxyDaemon.Options(config, io.nftproxy.daemon.NodeNetwork.namespace(ns.handle()), true), client, own,
                new SdNotify(Map.of()), Clock.systemUTC());
        daemon.start(store -> new ManifestDirectorySource(dir, store, Duration.ofMillis(50)));
        assertTrue(daemon.awaitFirstSync(Duration.ofSeconds(30)), "first sync");
    }

    @AfterEach
    void stop() throws IOException {
        if (daemon != null) daemon.close();
        if (ns != null) ns.close();
    }

    @Test
    void programsTheTablesAndReportsHealthy() throws Exception {
        assertTrue(helloIntact(), "demo/hello's endpoints in " + ExampleManifests.HELLO_ENDPOINTS_MAP);
        assertTrue(ns.nftOut("list", "chain", "ip", "kube-proxy", STICKY).contains("numgen random mod 3 0"));
        assertTrue(ns.listTableText(IpFamily.IPV6).contains("service-ips"), "the ip6 table too");
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + healthPort + "/healthz")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
    }

    @Test
    void aSecondDaemonInTheSameNetworkNamespaceRefusesToStart() throws Exception {
        String before = ns.listTableText(IpFamily.IPV4);
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = "k8s-node-2";
        b.manifests = dir;
        b.healthzBindAddress = new InetSocketAddress("127.0.0.1", 0);
        b.metricsBindAddress = new InetSocketAddress("127.0.0.1", 0);
        ProxyConfig config = b.build().validate();
        OwnProcesses own = OwnProcesses.thisProcess();
        NftClient client = NftClients.createInNamespace(NftClients.Mode.AUTO, ns.handle(), own::registerChild).client();
        try (ProxyDaemon second = new ProxyDaemon(new ProxyDaemon.Options(config, io.nftproxy.daemon.NodeNetwork.namespace(ns.handle()), true), client, own, new SdNotify(Map.of()), Clock.systemUTC())) {
            io.nftproxy.netlink.lock.NetnsLock.HeldException e = org.junit.jupiter.api.Assertions.assertThrows(
                    io.nftproxy.netlink.lock.NetnsLock.HeldException.class,
                    () -> second.start(store -> new ManifestDirectorySource(dir, store, Duration.ofMillis(50))));
            assertTrue(e.getMessage().contains("pid " + ProcessHandle.current().pid()), e.getMessage());
            assertTrue(second.serverAddresses().isEmpty(), "no server was started");
        }
        Thread.sleep(500);
        assertEquals(before, ns.listTableText(IpFamily.IPV4), "the first daemon's table is untouched");
        assertEquals(0.0, tamperResyncs(), "no rewrites to fight over");
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + healthPort + "/healthz")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), "the first daemon stays healthy: " + r.body());
    }

    @Test
    void aPersistentForeignWriterIsBackedOffAndMakesHealthzUnhealthyWithTheCause() throws Exception {
        // About ten rewrites a second for a minute, as a second proxy or a kube-proxy left running would.
        long t0 = System.nanoTime();
        int rewrites = 0;
        double afterTenSeconds = -1;
        while (System.nanoTime() - t0 < 60_000_000_000L) {
            ok("add", "rule", "ip", "kube-proxy", STICKY, "counter");
            rewrites++;
            if (afterTenSeconds < 0 && System.nanoTime() - t0 >= 10_000_000_000L) afterTenSeconds = tamperResyncs();
            Thread.sleep(100);
        }
        double repairs = tamperResyncs();
        System.out.printf("foreign writer: %d rewrites in 60 s, %.0f repairs (%.0f in the first 10 s)%n", rewrites, repairs,
                afterTenSeconds);
        assertTrue(rewrites >= 300, "the writer kept writing: " + rewrites);
        // Five at once, then back-off steps of 2, 4, 8, 16 s within the minute: a handful, not nine a second.
        assertTrue(repairs >= 1 && repairs <= 12, "repairs in the minute: " + repairs);
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + healthPort + "/healthz")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(503, r.statusCode(), r.body());
        assertTrue(r.body().contains("another process keeps rewriting the kube-proxy tables") && r.body().contains("process=nft"),
                r.body());
    }

    private double tamperResyncs() {
        for (String line : daemon.metrics().scrape().body().split("\n")) {
            if (line.startsWith("nftproxy_tamper_resyncs_total{ip_family=\"IPv4\"}")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return 0;
    }

    @Test
    void tamperingIsRepairedWithinASecond() throws Exception {
        repaired("delete table", () -> ok("delete", "table", "ip", "kube-proxy"), this::helloIntact);
        repaired("flush chain", () -> ok("flush", "chain", "ip", "kube-proxy", STICKY),
                () -> has("list", "chain", "ip", "kube-proxy", STICKY, "numgen random mod 3 0"));
        repaired("delete element", () -> ok("delete", "element", "ip", "kube-proxy", "cluster-ips", "{ 10.105.101.118 }"),
                () -> has("list", "set", "ip", "kube-proxy", "cluster-ips", "10.105.101.118"));
        repaired("flush ruleset", () -> ok("flush", "ruleset"), () -> helloIntact() && has("list", "table", "ip6", "kube-proxy", "service-ips"));
    }

    /** The flat layout's shared objects: the rules that read its maps, and one endpoint's slot. */
    @Test
    void tamperingWithTheFlatDispatchIsRepairedWithinASecond() throws Exception {
        repaired("flush services", () -> ok("flush", "chain", "ip", "kube-proxy", "services"),
                () -> has("list", "chain", "ip", "kube-proxy", "services", "@" + ExampleManifests.HELLO_ENDPOINTS_MAP));
        repaired("delete endpoint", () -> ok("delete", "element", "ip", "kube-proxy", ExampleManifests.HELLO_ENDPOINTS_MAP,
                "{ 10.105.101.118 . 80 . 1 }"), this::helloIntact);
    }

    @Test
    void aDeletedServicesChainIsGoneSoonAfterwardsNotJustEmptied() throws Exception {
        // demo/hello-local's Local traffic policy gives it a chain in every table layout.
        String chain = "local-4H2GLPZP-demo/hello-local/tcp/http";
        assertTrue(ns.nftOut("list", "table", "ip", "kube-proxy").contains(chain));
        Files.delete(dir.resolve("demo/hello-local.yaml"));
        waitFor("stale chain deleted", Duration.ofSeconds(4),
                () -> { try { return !ns.nftOut("list", "table", "ip", "kube-proxy").contains(chain); } catch (IOException e) { return false; } });
    }

    @Test
    void nodePortIpsFollowAnAddressAddedToTheNode() throws Exception {
        assertTrue(!has("list", "set", "ip", "kube-proxy", "nodeport-ips", "192.168.10.20"), "the node's IP is not configured yet");
        ns.exec(Duration.ofSeconds(10), null, "ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth1");
        long t0 = System.nanoTime();
        KernelNamespace.Result r = ns.exec(Duration.ofSeconds(10), null, "ip", "addr", "add", "192.168.10.20/24", "dev", "eth0");
        assertTrue(r.ok(), r.stderr());
        waitFor("nodeport-ips has the new address", Duration.ofSeconds(2),
                () -> has("list", "set", "ip", "kube-proxy", "nodeport-ips", "192.168.10.20"));
        System.out.printf("address monitor: nodeport-ips updated %d ms after the address was added%n", (System.nanoTime() - t0) / 1_000_000);
    }

    @Test
    void aManifestEditConvergesAndStoppingLeavesTheRules() throws Exception {
        Path hello = dir.resolve("demo/hello.yaml");
        String yaml = Files.readString(hello);
        Files.writeString(hello, yaml.replace("172.20.172.15", "172.20.172.99"));
        // Endpoints take their slots in address order: 172.20.172.17, 172.20.172.99, 172.20.211.48.
        String moved = ExampleManifests.helloSlot(1, "172.20.172.99");
        waitFor("edit applied", Duration.ofSeconds(10), () -> has("list", "map", "ip", "kube-proxy", ExampleManifests.HELLO_ENDPOINTS_MAP, moved));
        daemon.close();
        daemon = null;
        assertTrue(ns.nftOut("list", "map", "ip", "kube-proxy", ExampleManifests.HELLO_ENDPOINTS_MAP).contains(moved), "rules stay after stop");
    }

    private interface Tamper { void run() throws Exception; }

    private void repaired(String what, Tamper tamper, BooleanSupplier intact) throws Exception {
        long t0 = System.nanoTime();
        tamper.run();
        waitFor(what + " repaired", Duration.ofSeconds(1), intact);
        System.out.printf("tamper repair: %-15s %4d ms (including the nft process that tampered)%n", what, (System.nanoTime() - t0) / 1_000_000);
    }

    /** demo/hello's three endpoints are where the default layout keeps them, and the rule that reads them is there. */
    private boolean helloIntact() {
        return has("list", "map", "ip", "kube-proxy", ExampleManifests.HELLO_ENDPOINTS_MAP, ExampleManifests.helloSlot(0, "172.20.172.15"))
                && has("list", "map", "ip", "kube-proxy", ExampleManifests.HELLO_ENDPOINTS_MAP, ExampleManifests.helloSlot(1, "172.20.172.17"))
                && has("list", "map", "ip", "kube-proxy", ExampleManifests.HELLO_ENDPOINTS_MAP, ExampleManifests.helloSlot(2, "172.20.211.48"))
                && has("list", "chain", "ip", "kube-proxy", "services", "@" + ExampleManifests.HELLO_ENDPOINTS_MAP);
    }

    private void ok(String... args) throws IOException {
        String[] cmd = Stream.concat(Stream.of("nft"), Stream.of(args)).toArray(String[]::new);
        KernelNamespace.Result r = ns.exec(Duration.ofSeconds(10), null, cmd);
        assertTrue(r.ok(), String.join(" ", args) + ": " + r.stderr());
    }

    /** {@code nft ARGS} (all but the last) succeeds and prints the last argument. */
    private boolean has(String... argsAndNeedle) {
        try {
            String[] cmd = Stream.concat(Stream.of("nft"), Stream.of(argsAndNeedle).limit(argsAndNeedle.length - 1)).toArray(String[]::new);
            KernelNamespace.Result r = ns.exec(Duration.ofSeconds(5), null, cmd);
            return r.ok() && r.stdout().contains(argsAndNeedle[argsAndNeedle.length - 1]);
        } catch (IOException e) {
            return false;
        }
    }

    private static void waitFor(String what, Duration limit, BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < deadline) {
            if (cond.getAsBoolean()) return;
            Thread.sleep(10);
        }
        throw new AssertionError(what + ": not within " + limit.toMillis() + " ms");
    }
}
