package io.nftproxy.it.api;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * An HTTP/1.1 relay on 127.0.0.1 in front of the API server that terminates TLS on both sides, so it can inject the
 * faults a byte relay ({@link ApiRelay}) cannot: it serves with the API server's own certificate (issued for
 * 127.0.0.1 by the test CA, so a client of that CA trusts it) and connects upstream as a client of the same CA.
 * Requests, bearer token included, pass unchanged; the relay only reads their request lines.
 *
 * <p>Faults, each until {@link #pass()}: {@link #drop()} resets every connection and refuses new ones;
 * {@link #freeze()} holds every byte of the connections open now, both ways, without closing them (a watch that
 * stops delivering), while new connections pass, and a thaw delivers what was held; {@link #delay} holds each chunk
 * for a while; {@link #answer} resets the open
 * connections and answers every new request itself with an HTTP error and a Kubernetes Status body, as an
 * overloaded or failing API server does. {@link #trapFirstResponse} cuts one response in the middle.
 */
final class FaultRelay implements AutoCloseable {
    private enum Mode { PASS, DROP, ANSWER }

    /** Where a trapped response is cut: after this many bytes of it went through. */
    private static final int TRAP_AFTER_BYTES = 4_096;

    private final URI upstream;
    private final SSLServerSocket listener;
    private final javax.net.ssl.SSLSocketFactory upstreamTls;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private final java.util.concurrent.atomic.AtomicLong answered = new java.util.concurrent.atomic.AtomicLong();
    private volatile Mode mode = Mode.PASS;
    private volatile int status;
    private volatile long delayMillis;
    private volatile Trap trap;
    private final java.util.concurrent.atomic.AtomicLong epoch = new java.util.concurrent.atomic.AtomicLong();
    /** Connections opened before this epoch are frozen; none when negative. */
    private volatile long frozenBefore = -1;

    private static final class Trap {
        final String requestPrefix;
        final Runnable action;
        volatile Object connection;
        volatile boolean fired;

        Trap(String requestPrefix, Runnable action) {
            this.requestPrefix = requestPrefix;
            this.action = action;
        }
    }

    FaultRelay(URI apiServer, LoopbackCertificates certs) throws IOException {
        this.upstream = apiServer;
        this.listener = (SSLServerSocket) certs.serverContext().getServerSocketFactory()
                .createServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.upstreamTls = certs.clientContext().getSocketFactory();
        Thread acceptor = new Thread(this::acceptLoop, "fault-relay-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    URI url() { return URI.create("https://127.0.0.1:" + listener.getLocalPort()); }

    /** The request lines seen so far ({@code GET /api/v1/services?watch=1&sendInitialEvents=true&... HTTP/1.1}), answered or relayed. */
    List<String> requests() { return List.copyOf(requests); }

    /** How many requests the relay answered with an injected error. */
    long answered() { return answered.get(); }

    void drop() {
        mode = Mode.DROP;
        resetAll();
    }

    void freeze() { frozenBefore = epoch.incrementAndGet(); }

    /** Every chunk, either way, waits {@code millis} before it is passed on (0: none). Independent of the mode. */
    void delay(long millis) { delayMillis = millis; }

    /** Resets the open connections and answers every request from now on with {@code code}. */
    void answer(int code) {
        status = code;
        mode = Mode.ANSWER;
        resetAll();
    }

    void pass() {
        synchronized (gate) {
            mode = Mode.PASS;
            frozenBefore = -1;
            gate.notifyAll();
        }
    }

    /**
     * The first response to a request whose line starts with {@code requestPrefix} ({@code GET /api/v1/services?})
     * is cut after its first few kilobytes: {@code action} runs (kills the API server, say), then the connection is
     * reset, so the client holds part of a response when the server goes.
     */
    void trapFirstResponse(String requestPrefix, Runnable action) { trap = new Trap(requestPrefix, action); }

    boolean trapFired() { return trap != null && trap.fired; }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException closed) {
                return;
            }
            Thread t = new Thread(() -> serve((SSLSocket) client), "fault-relay-conn");
            t.setDaemon(true);
            t.start();
        }
    }

    private void serve(SSLSocket client) {
        Mode m = mode;
        if (m == Mode.DROP) {
            ApiRelay.abort(client);
            return;
        }
        if (m == Mode.ANSWER) {
            answerOne(client);
            return;
        }
        SSLSocket server;
        try {
            server = (SSLSocket) upstreamTls.createSocket(upstream.getHost(), upstream.getPort());
            server.startHandshake();
        } catch (IOException refused) {
            ApiRelay.abort(client);
            return;
        }
        open.add(client);
        open.add(server);
        Object connection = new Object();
        long born = epoch.get();
        Thread up = new Thread(() -> pump(client, server, connection, born, true), "fault-relay-up");
        up.setDaemon(true);
        up.start();
        pump(server, client, connection, born, false);
    }

    /** Reads one request head and answers it with the injected status; the connection closes after it. */
    private void answerOne(SSLSocket client) {
        try (client) {
            InputStream in = new BufferedInputStream(client.getInputStream());
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0) {
                head.write(b);
                byte[] h = head.toByteArray();
                int n = h.length;
                if (n >= 4 && h[n - 4] == '\r' && h[n - 3] == '\n' && h[n - 2] == '\r' && h[n - 1] == '\n') break;
                if (n > 64 * 1024) break;
            }
            String text = head.toString(StandardCharsets.ISO_8859_1);
            if (text.isEmpty()) return;
            requests.add(text.lines().findFirst().orElse(""));
            int code = status;
            String reason = switch (code) {
                case 429 -> "TooManyRequests";
                case 503 -> "ServiceUnavailable";
                default -> "InternalError";
            };
            byte[] body = ("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                    + "\"message\":\"injected by the test's fault relay\",\"reason\":\"" + reason + "\",\"code\":" + code + "}")
                    .getBytes(StandardCharsets.UTF_8);
            String response = "HTTP/1.1 " + code + " " + reason + "\r\n"
                    + "Content-Type: application/json\r\n"
                    + (code == 429 ? "Retry-After: 1\r\n" : "")
                    + "Content-Length: " + body.length + "\r\n"
                    + "Connection: close\r\n\r\n";
            OutputStream out = client.getOutputStream();
            out.write(response.getBytes(StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
            answered.incrementAndGet();
        } catch (IOException gone) {
            // the client gave up first
        }
    }

    private void pump(Socket from, Socket to, Object connection, long born, boolean requestSide) {
        byte[] buf = new byte[16 * 1024];
        long passed = 0;
        try (InputStream in = from.getInputStream()) {
            OutputStream out = to.getOutputStream();
            for (int n; (n = in.read(buf)) >= 0; ) {
                awaitThaw(born);
                long d = delayMillis;
                if (d > 0) Thread.sleep(d);
                Trap t = trap;
                if (requestSide) {
                    String chunk = new String(buf, 0, n, StandardCharsets.ISO_8859_1);
                    for (String line : chunk.split("\r\n")) {
                        if (line.matches("(GET|POST|PUT|PATCH|DELETE) \\S+ HTTP/1\\.1")) {
                            requests.add(line);
                            if (t != null && t.connection == null && line.startsWith(t.requestPrefix)) t.connection = connection;
                        }
                    }
                } else if (t != null && t.connection == connection && !t.fired && passed + n > TRAP_AFTER_BYTES) {
                    int part = (int) Math.max(0, TRAP_AFTER_BYTES - passed);
                    out.write(buf, 0, part);
                    out.flush();
                    t.fired = true;
                    t.action.run();
                    ApiRelay.abort(from);
                    ApiRelay.abort(to);
                    return;
                }
                out.write(buf, 0, n);
                out.flush();
                passed += n;
            }
            ApiRelay.abort(to);
        } catch (IOException | InterruptedException closed) {
            ApiRelay.abort(to);
        }
    }

    private void awaitThaw(long born) throws InterruptedException {
        synchronized (gate) {
            while (born < frozenBefore) gate.wait();
        }
    }

    private void resetAll() {
        for (Socket s : open) ApiRelay.abort(s);
        open.clear();
    }

    @Override public void close() throws IOException {
        listener.close();
        pass();
        resetAll();
    }
}
