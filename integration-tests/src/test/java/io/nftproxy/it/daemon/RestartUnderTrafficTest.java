package io.nftproxy.it.daemon;

import io.nftproxy.TestAddresses;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.daemon.ProxyDaemon;
import io.nftproxy.demo.EchoServer;
import io.nftproxy.demo.Probe;
import io.nftproxy.demo.Topology;
import io.nftproxy.it.net.TestNetworks;
import io.nftproxy.it.net.TrafficServices;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.render.TableLayout;
import io.nftproxy.systemd.SdNotify;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.Optional;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.nftproxy.it.net.TestNetworks.BACKEND_TCP_PORT;
import static io.nftproxy.it.net.TestNetworks.BACKEND_UDP_PORT;
import static io.nftproxy.it.net.TrafficServices.DNS;
import static io.nftproxy.it.net.TrafficServices.DNS_SVC;
import static io.nftproxy.it.net.TrafficServices.HTTP;
import static io.nftproxy.it.net.TrafficServices.WEB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Restarting the daemon must not disturb the dataplane: while new connections keep arriving and one UDP flow keeps
 * talking over the same conntrack entry, the daemon is stopped and a fresh one started on the same node. The new
 * daemon adopts the kernel's table — no rule is rewritten (every rule keeps its kernel handle) — and no connection
 * fails or moves.
 */
class RestartUnderTrafficTest {
    @Test
    void aRestartAdoptsTheTableAndNoConnectionNotices() throws Exception {
        KernelTests.assumeAvailableAnd(Optional.ofNullable(Topology.unavailabilityCause()));
        List<EchoServer> servers = new ArrayList<>();
        try (Topology topology = Topology.build(TestNetworks.plan())) {
            for (Topology.Host b : topology.backends()) servers.add(EchoServer.start(b.thread(), b.role(), BACKEND_TCP_PORT, BACKEND_UDP_PORT));
            NetworkNamespace netns = topology.node().netns();
            ProxyDaemon first = daemon(netns);
            assertTrue(first.awaitFirstSync(Duration.ofSeconds(30)), "first daemon synced");
            String handlesBefore = KernelNamespace.borrow(topology.node().netns()).nftOut("-a", "list", "table", "ip", "kube-proxy");

            // One UDP "flow" with a fixed source port: its conntrack entry pins it to one backend.
            DatagramChannel udp = topology.podClient().thread().call(() -> DatagramChannel.open().bind(new InetSocketAddress(0)));
            String udpBackend = udpAsk(topology, udp);

            AtomicBoolean running = new AtomicBoolean(true);
            List<Probe.Outcome> during = java.util.Collections.synchronizedList(new ArrayList<>());
            Thread load = new Thread(() -> {
                Probe probe = Probe.from(topology.podClient());
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                for (int i = 0; i < 400 && running.get() && System.nanoTime() < deadline; i++) {
                    try {
                        during.add(probe.tcp(WEB, HTTP));
                        Thread.sleep(10);
                    } catch (Exception e) {
                        during.add(new Probe.Outcome(Probe.Kind.ERROR, null, null, 0, e.toString()));
                    }
                }
            }, "restart-load");
            load.start();
            Thread.sleep(300);
            first.close();
            Thread.sleep(300);
            ProxyDaemon second = daemon(netns);
            try {
                assertTrue(second.awaitFirstSync(Duration.ofSeconds(30)), "second daemon synced");
                Thread.sleep(300);
                running.set(false);
                load.join(30_000);

                String handlesAfter = KernelNamespace.borrow(topology.node().netns()).nftOut("-a", "list", "table", "ip", "kube-proxy");
                assertEquals(handlesBefore, handlesAfter, "adoption rewrote nothing: every rule kept its handle");
                List<Probe.Outcome> failed = during.stream().filter(o -> !o.replied()).toList();
                System.out.printf("restart under traffic: %d connections during the restart, %d failed; UDP flow stayed on %s%n",
                        during.size(), failed.size(), udpBackend);
                assertTrue(during.size() >= 20, "enough connections during the restart: " + during.size());
                assertTrue(failed.isEmpty(), "connections failed during the restart: " + failed);
                for (int i = 0; i < 5; i++) assertEquals(udpBackend, udpAsk(topology, udp), "the UDP flow kept its backend");
            } finally {
                second.close();
                udp.close();
            }
        } finally {
            for (EchoServer s : servers) s.close();
        }
    }

    /** One datagram to the DNS service from the fixed socket; the backend's name from its answer. */
    private static String udpAsk(Topology topology, DatagramChannel udp) throws Exception {
        udp.send(ByteBuffer.wrap("q".getBytes(StandardCharsets.UTF_8)), new InetSocketAddress(DNS_SVC, DNS));
        ByteBuffer in = ByteBuffer.allocate(512);
        udp.configureBlocking(false);
        long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        while (udp.receive(in) == null) {
            if (System.nanoTime() > deadline) throw new AssertionError("no UDP answer from " + DNS_SVC);
            Thread.sleep(5);
        }
        return new String(in.array(), 0, in.position(), StandardCharsets.UTF_8).split(" ")[0];
    }

    private static ProxyDaemon daemon(NetworkNamespace netns) throws Exception {
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = TestAddresses.NODE;
        b.clusterCidrs = List.of(IpPrefix.parse(TestAddresses.CLUSTER_CIDR), IpPrefix.parse(TestAddresses.CLUSTER_CIDR6));
        b.healthzBindAddress = new InetSocketAddress("127.0.0.1", 0);
        b.metricsBindAddress = new InetSocketAddress("127.0.0.1", 0);
        b.nodeIPs = List.of(IpAddress.parse(TestAddresses.NODE_IP), IpAddress.parse(TestAddresses.NODE_IP6));
        ProxyConfig config = b.build().validate();
        OwnProcesses own = OwnProcesses.thisProcess();
        NftClient client = NftClients.createInNamespace(NftClients.Mode.AUTO, netns, own::registerChild).client();
        ProxyDaemon d = new ProxyDaemon(new ProxyDaemon.Options(config, io.nftproxy.daemon.NodeNetwork.namespace(netns), true), client, own,
                new SdNotify(Map.of()), Clock.systemUTC());
        ClusterSnapshot snapshot = TrafficServices.snapshot();
        d.start(store -> {
            store.replaceAll(snapshot);
            store.servicesListed();
            store.endpointSlicesListed();
            return () -> { };
        });
        return d;
    }
}
