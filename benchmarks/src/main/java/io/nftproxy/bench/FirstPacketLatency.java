package io.nftproxy.bench;

import io.nftproxy.diff.TransactionSplitter;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;
import io.nftproxy.netlink.nft.LibNftablesClient;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.net.IpFamily;
import io.nftproxy.nft.Transaction;
import io.nftproxy.service.Endpoint;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ServicePort;
import io.nftproxy.service.ServicePortName;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import io.nftproxy.sync.TableModel;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static io.nftproxy.bench.ApplyLatency.pct;
import static io.nftproxy.bench.ApplyLatency.report;

/**
 * The data plane's first packet: sequential TCP connects to one ClusterIP of a full rendered table, per table size,
 * each size in a fresh network namespace (deleted in a finally block). The measured Service's one endpoint is a real
 * TCP listener on an address of that namespace's loopback; every other Service has two remote endpoints
 * that are never contacted. A connect is timed from {@code connect()} to its return (the whole three-way handshake
 * over loopback, the nat hook's DNAT included); the client closes with a reset, so no TIME_WAIT piles up. Each run is
 * preceded by warm-up connects; a direct connect to the endpoint (no DNAT, same table loaded) is timed alongside as
 * the floor. Needs root.
 *
 * <p>Usage: {@code FirstPacketLatency layout connects runs sizes...}, e.g. {@code fast 20000 3 100 30000}.
 */
public final class FirstPacketLatency {
    private static final String ENDPOINT = "10.250.0.1";
    private static final int PORT = 8080;
    private static final int WARMUP = 2_000;

    private FirstPacketLatency() {}

    public static void main(String[] args) throws Exception {
        TableLayout layout = TableLayout.parse(args[0]);
        int connects = Integer.parseInt(args[1]);
        int runs = Integer.parseInt(args[2]);
        List<Integer> sizes = Arrays.stream(args).skip(3).map(Integer::parseInt).toList();
        report("# first packet, layout %s, %d connects x %d runs per size, load %s%n", layout.cliName(), connects, runs, load());
        for (int n : sizes) measure(layout, n, connects, runs);
    }

    private static void measure(TableLayout layout, int n, int connects, int runs) throws Exception {
        ProxyState state = withLocalEndpoint(new BenchCluster(2).state(n), n - 1);
        TableModel model = new TableModel(new Renderer(layout), IpFamily.IPV4, BenchCluster.node());
        Transaction cold = model.sync(state, BenchCluster.node()).transaction();
        ServicePort target = BenchCluster.service(n - 1);
        try (KernelNamespace ns = KernelNamespace.create("bfp");
             NftClient client = LibNftablesClient.inNamespace(ns.handle())) {
            ns.ip("link", "set", "lo", "up");
            ns.ip("addr", "add", ENDPOINT + "/32", "dev", "lo");
            // Without a route to the service range the connect fails before the nat hook is reached.
            ns.ip("route", "add", "172.16.0.0/12", "dev", "lo");
            for (Transaction part : TransactionSplitter.split(cold, 5_000)) client.apply(part);
            try (NetnsThread t = NetnsThread.start(ns.handle());
                 ServerSocket server = t.call(() -> listen())) {
                Thread acceptor = accepting(server);
                InetSocketAddress service = new InetSocketAddress(target.clusterIP().toString(), target.port());
                InetSocketAddress direct = new InetSocketAddress(ENDPOINT, PORT);
                t.call(() -> connectTimes(direct, WARMUP / 4));
                t.call(() -> connectTimes(service, WARMUP));
                for (int r = 1; r <= runs; r++) {
                    String before = load();
                    List<Double> via = t.call(() -> connectTimes(service, connects));
                    List<Double> floor = t.call(() -> connectTimes(direct, connects / 4));
                    report("%d services (%d commands), run %d, load %s -> %s: ClusterIP p50 %.1f / p99 %.1f us; direct p50 %.1f / p99 %.1f us%n",
                            n, cold.size(), r, before, load(), pct(via, 50), pct(via, 99), pct(floor, 50), pct(floor, 99));
                }
                acceptor.interrupt();
            }
        }
    }

    /** The state with Service {@code index}'s endpoints replaced by the one local listener. */
    private static ProxyState withLocalEndpoint(ProxyState s, int index) {
        ServicePortName name = BenchCluster.service(index).name();
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>(s.endpoints());
        eps.put(name, List.of(Endpoint.ready(ENDPOINT, PORT, true)));
        return new ProxyState(s.family(), new TreeMap<>(s.servicePorts()), eps, s.serviceCidrs(), s.diagnostics());
    }

    private static ServerSocket listen() throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(ENDPOINT, PORT), 4096);
        return s;
    }

    private static Thread accepting(ServerSocket server) {
        Thread t = new Thread(() -> {
            while (!server.isClosed()) {
                // A plain close (FIN): a reset from here could reach the client before its connect() returned.
                try (Socket ignored = server.accept()) {
                    // closed at once
                } catch (IOException e) {
                    return;
                }
            }
        }, "acceptor");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Microseconds per connect, {@code count} of them one after another; fails at the first connect that fails. */
    private static List<Double> connectTimes(InetSocketAddress to, int count) throws IOException {
        List<Double> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            try (Socket s = new Socket()) {
                s.setSoLinger(true, 0);
                long t0 = System.nanoTime();
                try {
                    s.connect(to, 2_000);
                } catch (IOException e) {
                    throw new IOException("connect " + (i + 1) + " of " + count + " to " + to + ": " + e.getMessage(), e);
                }
                out.add((System.nanoTime() - t0) / 1e3);
            }
        }
        return out;
    }

    static String load() {
        try {
            String[] f = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).split(" ");
            return f[0];
        } catch (IOException e) {
            return "?";
        }
    }
}
