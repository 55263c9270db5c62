package io.nftproxy.it.daemon;

import io.nftproxy.config.ProxyConfig;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.daemon.NodeNetwork;
import io.nftproxy.daemon.ProxyDaemon;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.source.ManifestDirectorySource;
import io.nftproxy.systemd.SdNotify;
import jnr.unixsocket.UnixDatagramChannel;
import jnr.unixsocket.UnixSocketAddress;
import jnr.unixsocket.UnixSocketOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A first sync too big for one transaction (3,000 Services, cut into parts by the cold-start splitter) tells systemd
 * where it is as it goes: a real sd_notify socket receives {@code STATUS=} at its start and after each committed
 * part, then {@code READY=1}, while the daemon programs a throwaway namespace from a manifest directory.
 */
class FirstSyncStatusKernelTest {
    private static final int SERVICES = 3000;
    private static final String NODE = "node-1";
    private static final Pattern PART = Pattern.compile("STATUS=first sync: table ip kube-proxy part (\\d+) of (\\d+) committed");

    @Test
    void aLongFirstSyncSendsStatusAfterEachPartThenReady(@TempDir Path dir) throws Exception {
        KernelTests.assumeAvailable();
        Path manifests = Files.createDirectories(dir.resolve("manifests"));
        Files.writeString(manifests.resolve("services.yaml"), services());
        Path socket = dir.resolve("notify.sock");
        List<String> received = new CopyOnWriteArrayList<>();
        try (KernelNamespace ns = KernelNamespace.create("status");
             UnixDatagramChannel channel = UnixDatagramChannel.open()) {
            channel.bind(new UnixSocketAddress(socket.toString()));
            channel.setOption(UnixSocketOptions.SO_RCVTIMEO, 200);
            Thread receiver = new Thread(() -> receive(channel, received), "notify-receiver");
            receiver.setDaemon(true);
            receiver.start();

            ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
            b.hostnameOverride = NODE;
            b.clusterCidrs = List.of(IpPrefix.parse("10.244.0.0/16"));
            b.manifests = manifests;
            // Port 0: no health or metrics server; they would listen in this host's namespace.
            b.healthzBindAddress = new InetSocketAddress("127.0.0.1", 0);
            b.metricsBindAddress = new InetSocketAddress("127.0.0.1", 0);
            OwnProcesses own = OwnProcesses.thisProcess();
            NftClient client = NftClients.createInNamespace(NftClients.Mode.AUTO, ns.handle(), own::registerChild).client();
            long t0 = System.nanoTime();
            try (ProxyDaemon daemon = new ProxyDaemon(new ProxyDaemon.Options(b.validate(), NodeNetwork.namespace(ns.handle()), true),
                    client, own, new SdNotify(Map.of("NOTIFY_SOCKET", socket.toString())),
                    Clock.systemUTC())) {
                daemon.start(store -> new ManifestDirectorySource(manifests, store, Duration.ofMillis(200)));
                assertTrue(daemon.awaitFirstSync(Duration.ofSeconds(120)), "first sync within 120 s");
                long ms = (System.nanoTime() - t0) / 1_000_000;
                long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                while (received.stream().noneMatch(m -> m.startsWith("READY=1")) && System.nanoTime() < deadline) Thread.sleep(20);
                System.out.printf("first sync of %d services in %d ms; sd_notify received %d datagrams:%n  %s%n", SERVICES, ms,
                        received.size(), String.join("\n  ", received));
            }
            receiver.interrupt();
        }
        int ready = indexOf(received, "READY=1");
        assertTrue(ready >= 0, received::toString);
        assertTrue(received.get(0).startsWith("STATUS=first sync: rendering and applying " + SERVICES), received::toString);
        int lastPart = 0, parts = 0, lastIndex = -1;
        for (int i = 0; i < received.size(); i++) {
            Matcher m = PART.matcher(received.get(i));
            if (!m.find()) continue;
            int part = Integer.parseInt(m.group(1));
            assertEquals(lastPart + 1, part, "parts in order: " + received);
            lastPart = part;
            parts = Integer.parseInt(m.group(2));
            lastIndex = i;
        }
        assertTrue(parts > 1, "the cold start was cut into parts: " + received);
        assertEquals(parts, lastPart, "every part of the IPv4 table reported: " + received);
        assertTrue(lastIndex < ready, "READY=1 comes after the parts: " + received);
        assertEquals("READY=1\nSTATUS=tables programmed", received.get(ready));
    }

    private static int indexOf(List<String> messages, String prefix) {
        for (int i = 0; i < messages.size(); i++) if (messages.get(i).startsWith(prefix)) return i;
        return -1;
    }

    private static void receive(UnixDatagramChannel channel, List<String> into) {
        ByteBuffer buf = ByteBuffer.allocate(4096);
        while (!Thread.currentThread().isInterrupted() && channel.isOpen()) {
            buf.clear();
            try {
                channel.receive(buf);
            } catch (IOException e) {
                continue; // SO_RCVTIMEO: nothing within 200 ms; look again
            }
            buf.flip();
            if (buf.hasRemaining()) into.add(StandardCharsets.UTF_8.decode(buf).toString());
        }
    }

    /** {@value #SERVICES} ClusterIP Services of one endpoint each, with their EndpointSlices, as one multi-document file. */
    private static String services() {
        StringBuilder y = new StringBuilder();
        for (int k = 0; k < SERVICES; k++) {
            String ip = "10.96." + (k / 250) + "." + (k % 250 + 1);
            String ep = "10.244." + (k / 250) + "." + (k % 250 + 1);
            y.append("apiVersion: v1\nkind: Service\nmetadata: {name: s").append(k).append(", namespace: load}\n")
                    .append("spec: {type: ClusterIP, clusterIP: ").append(ip)
                    .append(", ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080}]}\n---\n")
                    .append("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s").append(k)
                    .append("-1, namespace: load, labels: {kubernetes.io/service-name: s").append(k).append("}}\n")
                    .append("addressType: IPv4\nendpoints: [{addresses: [").append(ep).append("], conditions: {ready: true}}]\n")
                    .append("ports: [{name: http, port: 8080, protocol: TCP}]\n---\n");
        }
        return y.toString();
    }
}
