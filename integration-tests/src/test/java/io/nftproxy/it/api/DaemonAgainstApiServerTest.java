package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.daemon.ProxyDaemon;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.nft.TableContent;
import io.nftproxy.readback.KernelTableParser;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.render.TableLayout;
import io.nftproxy.source.KubernetesSource;
import io.nftproxy.source.api.ApiServer;
import io.nftproxy.systemd.SdNotify;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The daemon, in this JVM, fed by a real kube-apiserver through its Kubernetes source with kube-proxy's RBAC
 * identity, programming the table of a throwaway node namespace. Services and EndpointSlices written through the
 * API converge in the kernel and real traffic follows them; a 410 relist after etcd compaction and an API server
 * restart lose no update and remove no rule; 1,000 Services of 10 endpoints converge in bulk. The daemon reaches the
 * API through an {@link ApiRelay}, so a test can make the API unreachable for the daemon alone.
 *
 * <p>The API server runs without a watch cache so that a watch restarting at a compacted resource version gets 410
 * from etcd (with the cache it may be answered from memory). Times are printed.
 */
class DaemonAgainstApiServerTest {
    private static final String NODE = "node-1";
    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private static ApiCluster cluster;
    private static ApiServerProcess api;
    private static KubernetesClient admin;

    private final List<AutoCloseable> cleanup = new ArrayList<>();
    private KernelNamespace node;
    private ApiRelay relay;
    private ProxyDaemon daemon;

    @BeforeAll
    static void startApiServer() throws IOException {
        ApiCluster.assumeAvailable("DaemonAgainstApiServerTest", KernelNamespace.unavailabilityCause(), ApiServerBinaries.unavailabilityCause());
        cluster = ApiCluster.start(ApiServerProcess.Options.defaults().withApiServerArgs("--watch-cache=false"));
        api = cluster.api();
        admin = cluster.admin();
    }

    @AfterAll
    static void stopApiServer() throws IOException {
        if (cluster != null) cluster.close();
    }

    @AfterEach
    void stop() throws Exception {
        if (daemon != null) daemon.close();
        for (int i = cleanup.size() - 1; i >= 0; i--) cleanup.get(i).close();
        if (relay != null) relay.close();
        if (node != null) node.close();
    }

    // ---------------------------------------------------------------- tests

    @Test
    void convergesOnCreateUpdateDeleteAndTrafficFollowsTheSlice() throws Exception {
        startDaemon();
        String ns = namespace();
        // The backends and client live in namespaces routed through the node, so the ClusterIP is DNATed there.
        Backend a = backend("a", "10.240.2");
        Backend b = backend("b", "10.240.3");
        NetnsThread client = routedHost("c", "10.240.1");

        long t0 = System.nanoTime();
        Service web = admin.services().inNamespace(ns).resource(ApiServices.clusterIP(ns, "web", 80, 8080)).create();
        admin.discovery().v1().endpointSlices().inNamespace(ns).resource(slice(ns, "web", "web-1", 8080, List.of(a.ip))).create();
        String cip = web.getSpec().getClusterIP();
        awaitKernel("web created", Duration.ofSeconds(10), () -> endpoints(ns, "web").equals(Set.of(a.ip + "/8080")));
        System.out.printf("API -> kernel: create converged in %d ms%n", ms(t0));
        assertEquals("a", ask(client, cip, 80), "traffic to the ClusterIP reaches the only endpoint");

        t0 = System.nanoTime();
        admin.discovery().v1().endpointSlices().inNamespace(ns).withName("web-1")
                .edit(s -> new EndpointSliceBuilder(s).withEndpoints().addNewEndpoint().withAddresses(b.ip)
                        .withNewConditions().withReady(true).endConditions().endEndpoint().build());
        awaitKernel("slice moved to b", Duration.ofSeconds(10), () -> endpoints(ns, "web").equals(Set.of(b.ip + "/8080")));
        System.out.printf("API -> kernel: endpoint change converged in %d ms%n", ms(t0));
        assertEquals("b", ask(client, cip, 80), "after the slice moved, traffic goes to the new endpoint");

        // Scale to both, then change the service port: the old port's chain goes, the new one has both endpoints.
        admin.discovery().v1().endpointSlices().inNamespace(ns).withName("web-1")
                .edit(s -> new EndpointSliceBuilder(s).addNewEndpoint().withAddresses(a.ip)
                        .withNewConditions().withReady(true).endConditions().endEndpoint().build());
        awaitKernel("scaled to two", Duration.ofSeconds(10), () -> endpoints(ns, "web").size() == 2);
        t0 = System.nanoTime();
        admin.services().inNamespace(ns).withName("web").edit(s -> new ServiceBuilder(s).editSpec().editFirstPort()
                .withPort(81).endPort().endSpec().build());
        awaitKernel("port 81", Duration.ofSeconds(10), () -> ServiceIpsMap.holds(kernelText(), cip, "tcp", 81));
        System.out.printf("API -> kernel: service port change converged in %d ms%n", ms(t0));
        assertFalse(ServiceIpsMap.holds(kernelText(), cip, "tcp", 80), "port 80 left in service-ips");
        Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < 20 && seen.size() < 2; i++) seen.add(ask(client, cip, 81));
        assertEquals(Set.of("a", "b"), seen, "both endpoints serve on the new port");

        t0 = System.nanoTime();
        admin.services().inNamespace(ns).withName("web").delete();
        admin.discovery().v1().endpointSlices().inNamespace(ns).withName("web-1").delete();
        // The service chain itself is flushed at once and deleted by a later sync (KernelTable's stale-chain grace),
        // so what must be gone now is the ClusterIP's dispatch and every DNAT.
        awaitKernel("deleted", Duration.ofSeconds(10), () -> !kernelText().contains(cip + " . tcp") && endpoints(ns, "web").isEmpty());
        System.out.printf("API -> kernel: delete converged in %d ms%n", ms(t0));
    }

    @Test
    void compactionWhileDisconnectedForcesARelistThatLosesNothing() throws Exception {
        startDaemon();
        String ns = namespace();
        createWithEndpoints(ns, "kept", "10.250.0.1");
        createWithEndpoints(ns, "gone", "10.250.0.2");
        awaitKernel("initial", Duration.ofSeconds(10), () -> endpoints(ns, "kept").size() == 1 && endpoints(ns, "gone").size() == 1);

        relay.cut();
        // While the daemon cannot reach the API: an add, an update, a delete, then compaction past all of them, so
        // the daemon's watch cannot resume at its resource version (410 Gone) and only a relist can bring them.
        createWithEndpoints(ns, "added", "10.250.0.3");
        admin.discovery().v1().endpointSlices().inNamespace(ns).withName("kept-1").edit(s -> new EndpointSliceBuilder(s)
                .withEndpoints().addNewEndpoint().withAddresses("10.250.0.4").withNewConditions().withReady(true)
                .endConditions().endEndpoint().build());
        admin.services().inNamespace(ns).withName("gone").delete();
        admin.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("bump").endMetadata().build()).create();
        long compacted = api.compactEtcd();
        String before = kernelText();
        Thread.sleep(2_000);
        assertEquals(before, kernelText(), "the table changed while the API was unreachable");
        assertEquals(1, endpoints(ns, "gone").size(), "a rule was removed while the API was unreachable");

        long t0 = System.nanoTime();
        relay.restore();
        awaitKernel("relist after compaction to " + compacted, Duration.ofSeconds(40),
                () -> endpoints(ns, "added").size() == 1 && endpoints(ns, "kept").equals(Set.of("10.250.0.4/8080"))
                        && endpoints(ns, "gone").isEmpty());
        System.out.printf("410 relist: all changes made while disconnected arrived %d ms after reconnecting%n", ms(t0));
    }

    /** Short, so the blackhole test does not wait the production 15 s twice. */
    private static final Duration LAG_PROBE = Duration.ofSeconds(2);

    @Test
    void aSilentlyDeadWatchIsReplacedAndNoUpdateIsLost() throws Exception {
        startDaemon();
        String ns = namespace();
        createWithEndpoints(ns, "before", "10.250.2.1");
        awaitKernel("initial", Duration.ofSeconds(10), () -> endpoints(ns, "before").size() == 1);

        // The daemon's connections go silent without closing (half-open): its watches deliver nothing more.
        relay.blackhole();
        createWithEndpoints(ns, "during", "10.250.2.2");
        admin.services().inNamespace(ns).withName("before").delete();
        String before = kernelText();
        Thread.sleep(3_000);
        assertEquals(before, kernelText(), "the table changed while the API was unreachable");
        assertEquals(1, endpoints(ns, "before").size(), "a rule was removed while the API was unreachable");

        // The path comes back, but the silenced watch connections stay dead: only a new watch brings the changes,
        // and only a fresh list can show that "before" was deleted (its delete event went down with the old watch).
        long t0 = System.nanoTime();
        relay.restore();
        awaitKernel("changes made behind the blackhole", Duration.ofSeconds(60),
                () -> endpoints(ns, "during").size() == 1 && endpoints(ns, "before").isEmpty());
        System.out.printf("blackholed watch: detected and every change applied %d ms after the path came back (lag probe every %d s)%n",
                ms(t0), LAG_PROBE.toSeconds());
    }

    @Test
    void apiServerRestartRemovesNoRuleAndLaterChangesArrive() throws Exception {
        startDaemon();
        String ns = namespace();
        createWithEndpoints(ns, "steady", "10.250.1.1");
        awaitKernel("initial", Duration.ofSeconds(10), () -> endpoints(ns, "steady").size() == 1);

        String before = kernelText();
        long t0 = System.nanoTime();
        api.stopApiServer();
        // The daemon keeps retrying against a refused port; nothing it holds may be withdrawn meanwhile.
        for (int i = 0; i < 5; i++) {
            Thread.sleep(1_000);
            assertEquals(before, kernelText(), "the table changed while the API server was down");
        }
        api.startApiServer();
        long restarted = System.nanoTime();
        createWithEndpoints(ns, "after", "10.250.1.2");
        awaitKernel("change after restart", Duration.ofSeconds(60), () -> endpoints(ns, "after").size() == 1);
        System.out.printf("restart: API server down %d ms; a change made after it came back reached the kernel %d ms later%n",
                (restarted - t0) / 1_000_000, ms(restarted));
        assertEquals(Set.of("10.250.1.1/8080"), endpoints(ns, "steady"));
    }

    @Test
    void thousandServicesOfTenEndpointsConvergeInBulk() throws Exception {
        startDaemon();
        String ns = namespace();
        int services = 1_000;
        long t0 = System.nanoTime();
        ApiServices.create(admin, ns, services, n -> {
            List<String> ips = new ArrayList<>();
            for (int e = 0; e < 10; e++) ips.add("10.251." + (n / 25) + "." + ((n % 25) * 10 + e + 1));
            return ips;
        });
        long created = System.nanoTime();
        Set<String> mine = admin.services().inNamespace(ns).list().getItems().stream()
                .map(s -> s.getSpec().getClusterIP() + ":80").collect(Collectors.toSet());
        assertEquals(services, mine.size());
        awaitKernel("1000 services", Duration.ofSeconds(120), () -> {
            Map<String, Set<String>> all = KernelDispatch.all(table());
            return mine.stream().allMatch(k -> all.getOrDefault(k, Set.of()).size() == 10);
        });
        System.out.printf("bulk: %d services x 10 endpoints: created through the API in %d ms; kernel held all %d ms after the first create%n",
                services, (created - t0) / 1_000_000, ms(t0));
    }

    // ---------------------------------------------------------------- daemon and kernel

    private void startDaemon() throws Exception {
        node = KernelNamespace.create("api");
        sysctl(node, "net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0");
        node.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
        relay = new ApiRelay(api.url());
        Path kubeconfig = Files.createTempFile("nftp-daemon-", ".kubeconfig");
        cleanup.add(() -> Files.deleteIfExists(kubeconfig));
        Files.writeString(kubeconfig, Files.readString(api.proxyKubeconfig()).replace(api.url().toString(), relay.url().toString()));

        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = NODE;
        b.clusterCidrs = List.of(IpPrefix.parse("10.240.0.0/16"));
        b.healthzBindAddress = new InetSocketAddress("127.0.0.1", 0);
        b.metricsBindAddress = new InetSocketAddress("127.0.0.1", 0);
        b.kubeconfig = kubeconfig;
        ProxyConfig config = b.build().validate();
        OwnProcesses own = OwnProcesses.thisProcess();
        NftClient nft = NftClients.createInNamespace(NftClients.Mode.AUTO, node.handle(), own::registerChild).client();
        daemon = new ProxyDaemon(new ProxyDaemon.Options(config, io.nftproxy.daemon.NodeNetwork.namespace(node.handle()), true), nft, own,
                new SdNotify(Map.of()), Clock.systemUTC());
        daemon.start(store -> {
            KubernetesSource src = new KubernetesSource(ApiServer.fromKubeconfig(kubeconfig), store, LAG_PROBE,
                    KubernetesSource.DEFAULT_NODE_WAIT);
            src.start(NODE);
            return src;
        });
        assertTrue(daemon.awaitFirstSync(Duration.ofSeconds(30)), "first sync");
    }

    private TableContent table() {
        try {
            return KernelTableParser.parse(node.listTable(IpFamily.IPV4));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private String kernelText() {
        try {
            return node.listTableText(IpFamily.IPV4);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The ClusterIP of each Service a test made, looked up once, so that a deleted Service's address is still asked about. */
    private final Map<String, String> clusterIps = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Where the kernel sends a pod's connection to Service {@code ns/name}'s port 80 ("IP/port" DNAT targets), traced
     * through the table read back from the kernel, in whatever table layout the daemon wrote it.
     */
    private Set<String> endpoints(String ns, String name) {
        String cip = clusterIps.computeIfAbsent(ns + "/" + name, k -> {
            Service s = admin.services().inNamespace(ns).withName(name).get();
            return s == null ? null : s.getSpec().getClusterIP();
        });
        return cip == null ? Set.of() : KernelDispatch.targets(table(), cip, 80);
    }

    private void awaitKernel(String what, Duration limit, BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                String chains = String.join("\n", table().chains().keySet().stream().limit(40).toList());
                throw new AssertionError(what + ": kernel not converged within " + limit.toSeconds() + " s; chains:\n" + chains);
            }
            Thread.sleep(25);
        }
    }

    // ---------------------------------------------------------------- API objects

    private static String namespace() {
        String ns = "nftp-d" + NAMESPACES.incrementAndGet();
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
        return ns;
    }

    private static void createWithEndpoints(String ns, String name, String ip) {
        admin.services().inNamespace(ns).resource(ApiServices.clusterIP(ns, name, 80, 8080)).create();
        admin.discovery().v1().endpointSlices().inNamespace(ns).resource(slice(ns, name, name + "-1", 8080, List.of(ip))).create();
    }

    /** A slice written by hand, as a controller other than the EndpointSlice controller would (managed-by set). */
    static EndpointSlice slice(String ns, String service, String name, int port, List<String> addresses) {
        EndpointSliceBuilder b = new EndpointSliceBuilder()
                .withNewMetadata().withNamespace(ns).withName(name)
                .addToLabels("kubernetes.io/service-name", service)
                .addToLabels("endpointslice.kubernetes.io/managed-by", "nftproxy-tests")
                .endMetadata()
                .withAddressType("IPv4")
                .addNewPort().withName("http").withProtocol("TCP").withPort(port).endPort();
        for (String a : addresses) {
            b.addNewEndpoint().withAddresses(a).withNewConditions().withReady(true).endConditions().endEndpoint();
        }
        return b.build();
    }

    // ---------------------------------------------------------------- traffic

    private record Backend(String name, String ip) {}

    /**
     * A namespace behind the node on {@code prefix}.0/24: the host is .2, the node's end .1 and its default route.
     * Namespaces and threads are closed after the test.
     */
    private NetnsThread routedHost(String tag, String prefix) throws IOException {
        KernelNamespace host = KernelNamespace.create(tag);
        cleanup.add(host);
        String nodeEnd = "v" + tag + "n";
        run(node, "ip", "link", "add", nodeEnd, "type", "veth", "peer", "name", "eth0", "netns", host.name());
        run(node, "ip", "addr", "add", prefix + ".1/24", "dev", nodeEnd);
        run(node, "ip", "link", "set", nodeEnd, "up");
        run(host, "ip", "link", "set", "lo", "up");
        run(host, "ip", "addr", "add", prefix + ".2/24", "dev", "eth0");
        run(host, "ip", "link", "set", "eth0", "up");
        run(host, "ip", "route", "add", "default", "via", prefix + ".1");
        NetnsThread t = NetnsThread.start(host.handle());
        cleanup.add(t);
        return t;
    }

    /** A host whose in-JVM server on :8080 answers every connection with its name and closes. */
    private Backend backend(String name, String prefix) throws Exception {
        NetnsThread t = routedHost(name, prefix);
        ServerSocket server = t.call(() -> {
            ServerSocket s = new ServerSocket();
            s.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 8080));
            return s;
        });
        cleanup.add(server);
        Thread acceptor = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket c = server.accept(); OutputStream out = c.getOutputStream()) {
                    out.write((name + "\n").getBytes(StandardCharsets.UTF_8));
                } catch (IOException closed) {
                    // closed at the end of the test, or a client gave up
                }
            }
        }, "echo-" + name);
        acceptor.setDaemon(true);
        acceptor.start();
        return new Backend(name, prefix + ".2");
    }

    /** Connects from the client namespace (socket opened on its thread) and returns the name the backend sent. */
    private static String ask(NetnsThread client, String ip, int port) throws Exception {
        return client.call(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getByName(ip), port), 3_000);
                s.setSoTimeout(3_000);
                return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8)).readLine();
            }
        });
    }

    private static void sysctl(KernelNamespace ns, String... settings) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(KernelNamespace.executable("sysctl").orElse("sysctl"), "-q", "-w"));
        cmd.addAll(List.of(settings));
        run(ns, cmd.toArray(String[]::new));
    }

    private static void run(KernelNamespace ns, String... cmd) throws IOException {
        KernelNamespace.Result r = ns.exec(Duration.ofSeconds(10), null, cmd);
        if (!r.ok()) throw new IOException(ns + ": " + String.join(" ", cmd) + ": " + r.stderr().strip());
    }

    private static long ms(long t0) { return (System.nanoTime() - t0) / 1_000_000; }
}
