package io.nftproxy.conntrack;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.diff.Differ;
import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.nft.LibNftablesClient;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.ProxyStateBuilder;
import io.nftproxy.render.Renderer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The reason the cleaner exists, with real packets: a UDP client keeps one source port and talks to a ClusterIP
 * through a rendered kube-proxy table; the endpoint it landed on is removed from the service. Without the cleaner its
 * datagrams keep following the old conntrack entry to the removed backend; after the cleaner they reach the other
 * backend (DESIGN target: at most 1 s after the sync).
 *
 * <pre>
 *  client 10.0.1.2 ── c0 10.0.1.1 [node: kube-proxy table] b1 10.0.2.1 ── 10.0.2.2 backend b1 :5353
 *                                                           b2 10.0.3.1 ── 10.0.3.2 backend b2 :5353
 *  ClusterIP 172.30.0.53:53/UDP
 * </pre>
 * The client is in the cluster CIDR, so nothing is masqueraded and replies are un-DNATed on the way back.
 */
class UdpFlowMoveKernelTest {
    private static final String CLUSTER_IP = "172.30.0.53";
    private static final int CLIENT_PORT = 40000;
    private static final int MAX_DATAGRAMS = 200;
    private static final long BUDGET_NANOS = 15_000_000_000L;
    private static final int REPLY_TIMEOUT_MS = 200;
    /** Spaced so the stale phase outlasts the 1 s target: without the cleaner nothing moves in that time. */
    private static final int STALE_CHECKS = 10;
    private static final long STALE_SPACING_MS = 110;

    private static ClusterSnapshot snapshot(List<String> backends) {
        TestClusters.Slice s = slice("default", "dns", "dns-1").port("dns", "UDP", 5353);
        for (String b : backends) s.ready(b, TestClusters.OTHER_NODE);
        return cluster().service(svc("default", "dns").clusterIP(CLUSTER_IP).port("dns", "UDP", 53).build())
                .slice(s.build()).snapshot();
    }

    private static TableContent render(ClusterSnapshot s) {
        return Renderer.upstream().render(s, TestClusters.node()).table(IpFamily.IPV4);
    }

    /** A UDP server in a backend namespace answering every datagram with its own name. */
    private static final class Backend implements AutoCloseable {
        final String name;
        final DatagramSocket socket;
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread thread;

        Backend(String name, String netns) throws Exception {
            this.name = name;
            this.socket = NetworkNamespace.named(netns).call(() -> new DatagramSocket(new InetSocketAddress("0.0.0.0", 5353)));
            socket.setSoTimeout(100);
            thread = new Thread(this::serve, "udp-backend-" + name);
            thread.setDaemon(true);
            thread.start();
        }

        private void serve() {
            byte[] buf = new byte[512];
            // Bounded like the client: the loop ends on close or after the test's time budget.
            long end = System.nanoTime() + BUDGET_NANOS + 5_000_000_000L;
            while (!stop.get() && System.nanoTime() < end) {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                try {
                    socket.receive(p);
                    byte[] reply = (name + " " + new String(p.getData(), 0, p.getLength(), StandardCharsets.UTF_8))
                            .getBytes(StandardCharsets.UTF_8);
                    socket.send(new DatagramPacket(reply, reply.length, p.getSocketAddress()));
                } catch (SocketTimeoutException e) {
                    // poll stop
                } catch (IOException e) {
                    return;
                }
            }
        }

        @Override public void close() throws InterruptedException {
            stop.set(true);
            socket.close();
            thread.join(2_000);
        }
    }

    /** The client: one socket, one source port, a datagram budget for the whole test. */
    private static final class Client implements AutoCloseable {
        final DatagramSocket socket;
        final InetSocketAddress service = new InetSocketAddress(InetAddress.getByName(CLUSTER_IP), 53);
        final long deadline = System.nanoTime() + BUDGET_NANOS;
        int sent;

        Client(String netns) throws Exception {
            socket = NetworkNamespace.named(netns).call(() -> new DatagramSocket(new InetSocketAddress("10.0.1.2", CLIENT_PORT)));
            socket.setSoTimeout(REPLY_TIMEOUT_MS);
        }

        /** Sends one datagram and returns the name of the backend that answered, or null on timeout. */
        String ask() throws IOException {
            if (sent >= MAX_DATAGRAMS) throw new AssertionError("datagram budget of " + MAX_DATAGRAMS + " spent");
            if (System.nanoTime() > deadline) throw new AssertionError("time budget spent");
            byte[] msg = String.valueOf(++sent).getBytes(StandardCharsets.UTF_8);
            socket.send(new DatagramPacket(msg, msg.length, service));
            byte[] buf = new byte[512];
            DatagramPacket p = new DatagramPacket(buf, buf.length);
            long until = System.nanoTime() + REPLY_TIMEOUT_MS * 1_000_000L;
            while (System.nanoTime() < until) {
                try {
                    socket.receive(p);
                } catch (SocketTimeoutException e) {
                    return null;
                }
                String[] r = new String(p.getData(), 0, p.getLength(), StandardCharsets.UTF_8).split(" ");
                if (!p.getSocketAddress().equals(service)) {
                    throw new AssertionError("reply from " + p.getSocketAddress() + ", not un-DNATed to " + service);
                }
                if (r[1].equals(String.valueOf(sent))) return r[0]; // a late reply to an earlier datagram is skipped
            }
            return null;
        }

        @Override public void close() { socket.close(); }
    }

    @Test
    void theCleanerMovesAUdpClientOffARemovedEndpoint() throws Exception {
        KernelTests.assumeAvailable("conntrack");
        List<KernelNamespace> created = new ArrayList<>();
        try {
            KernelNamespace node = add(created, KernelNamespace.create("ctnode"));
            KernelNamespace client = add(created, KernelNamespace.create("ctcli"));
            KernelNamespace b1 = add(created, KernelNamespace.create("ctb1"));
            KernelNamespace b2 = add(created, KernelNamespace.create("ctb2"));
            node.ip("link", "set", "lo", "up");
            node.execChecked("sysctl", "-q", "-w", "net.ipv4.ip_forward=1");
            link(node, "c0", "10.0.1.1", client, "10.0.1.2");
            link(node, "b1", "10.0.2.1", b1, "10.0.2.2");
            link(node, "b2", "10.0.3.1", b2, "10.0.3.2");

            TableContent both = render(snapshot(List.of("10.0.2.2", "10.0.3.2")));
            try (LibNftablesClient nft = LibNftablesClient.inNamespace(node.handle());
                 Backend back1 = new Backend("b1", b1.name());
                 Backend back2 = new Backend("b2", b2.name());
                 Client c = new Client(client.name())) {
                nft.apply(Transaction.creating(both));

                String first = null;
                for (int i = 0; i < 20 && first == null; i++) first = c.ask();
                assertNotNull(first, "no answer through the ClusterIP at all");
                String other = first.equals("b1") ? "b2" : "b1";
                String remaining = other.equals("b1") ? "10.0.2.2" : "10.0.3.2";
                assertEquals(first, c.ask(), "a fixed source port stays on its backend");

                // The sync that removes the backend the client landed on.
                ClusterSnapshot after = snapshot(List.of(remaining));
                nft.apply(Differ.diff(both, render(after)).transaction());
                long synced = System.nanoTime();

                // Without the cleaner: every datagram still follows the old entry to the removed backend.
                for (int i = 0; i < STALE_CHECKS; i++) {
                    assertEquals(first, c.ask(), "datagram " + c.sent + " after the sync, before the cleaner");
                    Thread.sleep(STALE_SPACING_MS);
                }
                long staleMillis = (System.nanoTime() - synced) / 1_000_000;

                long cleanStart = System.nanoTime();
                CleanupReport r = node.handle().call(() -> new ConntrackCleaner().clean(
                        ProxyStateBuilder.build(after, IpFamily.IPV4, TestClusters.NODE), null));
                long cleaned = System.nanoTime();
                assertEquals(1, r.deleted(), r.toString());

                String now = null;
                while (now == null || now.equals(first)) now = c.ask();
                long moved = System.nanoTime();
                assertEquals(other, now);
                assertEquals(other, c.ask(), "and it stays there");

                double cleanerMs = (cleaned - cleanStart) / 1e6;
                double movedMs = (moved - cleanStart) / 1e6;
                System.out.printf("UDP flow move: %d datagrams over %d ms after the sync all went to removed %s; "
                                + "cleaner %.1f ms (%s); first datagram answered by %s %.1f ms after the cleaner started; "
                                + "%d datagrams in all%n", STALE_CHECKS, staleMillis, first, cleanerMs, r, other, movedMs, c.sent);
                assertTrue(movedMs <= 1_000, "moved " + movedMs + " ms after the cleanup started");
            }
        } finally {
            IOException failure = null;
            for (KernelNamespace ns : created) {
                try {
                    ns.close();
                } catch (IOException e) {
                    failure = e;
                }
            }
            if (failure != null) throw failure;
        }
    }

    private static KernelNamespace add(List<KernelNamespace> list, KernelNamespace ns) {
        list.add(ns);
        return ns;
    }

    /** A veth pair from the node to {@code peer}, made inside the node namespace; the peer routes via the node. */
    private static void link(KernelNamespace node, String dev, String nodeIp, KernelNamespace peer, String peerIp) throws IOException {
        node.ip("link", "add", dev, "type", "veth", "peer", "name", "eth0", "netns", peer.name());
        node.ip("addr", "add", nodeIp + "/24", "dev", dev);
        node.ip("link", "set", dev, "up");
        peer.ip("link", "set", "lo", "up");
        peer.ip("addr", "add", peerIp + "/24", "dev", "eth0");
        peer.ip("link", "set", "eth0", "up");
        peer.ip("route", "add", "default", "via", nodeIp);
    }
}
