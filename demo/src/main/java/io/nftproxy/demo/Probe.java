package io.nftproxy.demo;

import io.nftproxy.netlink.NetnsThread;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.PortUnreachableException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * A client that sends one request from a namespace and says what happened: a reply from an {@link EchoServer}
 * (which backend, and the peer address it saw), a refusal (a REJECT's ICMP port unreachable or a TCP reset), an
 * unreachable error (ICMP host unreachable from a router), or silence until the timeout (a DROP).
 */
public final class Probe {
    /** Ample for a reply across four namespaces on a loaded 2-core machine (replies take about a millisecond). */
    public static final int DEFAULT_TIMEOUT_MILLIS = 2_000;
    /** A cap on any one batch of probes, whatever the caller asks. */
    public static final int MAX_PROBES = 500;
    /**
     * A batch stops early after this many requests without a reply, or after {@link #MAX_BATCH_MILLIS}: a broken
     * table should fail a test in seconds, not wait out sixty timeouts.
     */
    public static final int MAX_FAILURES_PER_BATCH = 3;
    public static final long MAX_BATCH_MILLIS = 20_000;

    public enum Kind { REPLY, REFUSED, UNREACHABLE, TIMEOUT, ERROR }

    /** What one request met. {@code backend} and {@code peer} are set for {@link Kind#REPLY} only. */
    public record Outcome(Kind kind, String backend, String peer, long micros, String detail) {
        public boolean replied() { return kind == Kind.REPLY; }
        public double millis() { return micros / 1000.0; }
        @Override public String toString() {
            return kind == Kind.REPLY ? backend + " saw " + peer + String.format(" (%.1f ms)", millis())
                    : kind + String.format(" after %.1f ms", millis()) + (detail == null ? "" : ": " + detail);
        }
    }

    private final NetnsThread from;
    private final String bindAddress;
    private final int timeoutMillis;

    private Probe(NetnsThread from, String bindAddress, int timeoutMillis) {
        this.from = from;
        this.bindAddress = bindAddress;
        this.timeoutMillis = timeoutMillis;
    }

    /** Probes from {@code host}'s namespace with the source address the kernel picks. */
    public static Probe from(Topology.Host host) { return new Probe(host.thread(), null, DEFAULT_TIMEOUT_MILLIS); }

    /** The same probe with a fixed source address (one of the namespace's own). */
    public Probe boundTo(String address) { return new Probe(from, address, timeoutMillis); }

    public Probe timeoutMillis(int millis) { return new Probe(from, bindAddress, millis); }

    public Outcome tcp(String address, int port) throws Exception {
        return from.call(() -> tcpHere(address, port));
    }

    /**
     * Up to {@code count} TCP connections, one after another, each from a fresh ephemeral port; fewer when the
     * batch stops early (see {@link #MAX_FAILURES_PER_BATCH}).
     */
    public List<Outcome> tcp(String address, int port, int count) throws Exception {
        return from.call(() -> batch(count, () -> tcpHere(address, port)));
    }

    /** Up to {@code count} UDP requests, each from a fresh socket and so a fresh conntrack entry. */
    public List<Outcome> udp(String address, int port, int count) throws Exception {
        return from.call(() -> batch(count, () -> udpHere(address, port)));
    }

    private static List<Outcome> batch(int count, Supplier<Outcome> one) {
        int n = Math.min(count, MAX_PROBES);
        long deadline = System.nanoTime() + MAX_BATCH_MILLIS * 1_000_000;
        List<Outcome> out = new ArrayList<>(n);
        int failures = 0;
        for (int i = 0; i < n && failures < MAX_FAILURES_PER_BATCH && System.nanoTime() < deadline; i++) {
            Outcome o = one.get();
            out.add(o);
            if (!o.replied()) failures++;
        }
        return out;
    }

    /** Replies per backend, plus one entry per other kind of outcome, sorted: {@code {pod-a=21, pod-b=19, ...}}. */
    public static Map<String, Integer> spread(List<Outcome> outcomes) {
        Map<String, Integer> m = new TreeMap<>();
        for (Outcome o : outcomes) m.merge(o.replied() ? o.backend() : o.kind().name(), 1, Integer::sum);
        return m;
    }

    private Outcome tcpHere(String address, int port) {
        long start = System.nanoTime();
        try (Socket s = new Socket()) {
            if (bindAddress != null) s.bind(new InetSocketAddress(bindAddress, 0));
            s.connect(new InetSocketAddress(address, port), timeoutMillis);
            s.setSoTimeout(timeoutMillis);
            return parse(readLine(s.getInputStream()), start);
        } catch (IOException e) {
            return failed(e, start);
        }
    }

    private Outcome udpHere(String address, int port) {
        long start = System.nanoTime();
        try (DatagramSocket s = new DatagramSocket(bindAddress == null ? null : new InetSocketAddress(bindAddress, 0))) {
            // Connected, so an ICMP error for the request is reported on this socket instead of being dropped.
            s.connect(new InetSocketAddress(address, port));
            s.setSoTimeout(timeoutMillis);
            byte[] req = "ping".getBytes(StandardCharsets.US_ASCII);
            s.send(new DatagramPacket(req, req.length));
            byte[] buf = new byte[512];
            DatagramPacket p = new DatagramPacket(buf, buf.length);
            s.receive(p);
            return parse(new String(buf, 0, p.getLength(), StandardCharsets.US_ASCII).strip(), start);
        } catch (IOException e) {
            return failed(e, start);
        }
    }

    /** A TCP reset or ICMP port unreachable is a refusal, another failed connect or ICMP host unreachable no route. */
    private static Outcome failed(IOException e, long start) {
        boolean refused = e instanceof PortUnreachableException
                || e instanceof ConnectException && e.getMessage() != null && e.getMessage().contains("refused");
        Kind kind = refused ? Kind.REFUSED
                : e instanceof ConnectException || e instanceof NoRouteToHostException ? Kind.UNREACHABLE
                : e instanceof SocketTimeoutException ? Kind.TIMEOUT : Kind.ERROR;
        String detail = kind == Kind.TIMEOUT ? null : kind == Kind.ERROR ? e.toString() : e.getMessage();
        return new Outcome(kind, null, null, since(start), detail);
    }

    private static Outcome parse(String line, long start) {
        String[] f = line == null ? new String[0] : line.split(" ");
        if (f.length != 2) return new Outcome(Kind.ERROR, null, null, since(start), "unexpected reply: " + line);
        return new Outcome(Kind.REPLY, f[0], f[1], since(start), null);
    }

    /** One short line; the server closes after it, so EOF ends it too. */
    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int c; sb.length() < 256 && (c = in.read()) != -1 && c != '\n'; ) sb.append((char) c);
        return sb.toString();
    }

    private static long since(long start) { return (System.nanoTime() - start) / 1_000; }
}
