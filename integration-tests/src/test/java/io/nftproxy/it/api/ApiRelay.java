package io.nftproxy.it.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A byte-for-byte TCP relay on a loopback port in front of the API server, so a test can cut one client off while
 * the server and every other client carry on. TLS passes through untouched (the server's certificate is for
 * 127.0.0.1, which the relay's address also is). {@link #cut()} resets every relayed connection and refuses new
 * ones until {@link #restore()}: the client sees the API as unreachable, then reconnects.
 */
public final class ApiRelay implements AutoCloseable {
    private final ServerSocket listener;
    private final InetSocketAddress upstream;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final Thread acceptor;
    private volatile boolean cut;
    private volatile boolean blackholed;
    /** Connections accepted before this epoch are dead: whatever arrives on them is dropped, nothing is closed. */
    private volatile long deadBefore;
    private final java.util.concurrent.atomic.AtomicLong epoch = new java.util.concurrent.atomic.AtomicLong();
    private final List<Socket> held = new CopyOnWriteArrayList<>();
    /** Bytes relayed towards the server and towards the clients, TLS records and all, as on the wire. */
    private final java.util.concurrent.atomic.AtomicLong toServer = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong toClients = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong connections = new java.util.concurrent.atomic.AtomicLong();

    ApiRelay(URI apiServer) throws IOException { this(apiServer, new ServerSocket(0, 50, InetAddress.getLoopbackAddress())); }

    /**
     * Relays from a listener of the caller's: one bound inside a network namespace gives a process there the API
     * server on its own loopback, with no link between the namespaces (the bytes cross in this JVM).
     */
    public ApiRelay(URI apiServer, ServerSocket listener) {
        this.upstream = new InetSocketAddress(apiServer.getHost(), apiServer.getPort());
        this.listener = listener;
        this.acceptor = new Thread(this::acceptLoop, "api-relay-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public URI url() { return URI.create("https://127.0.0.1:" + listener.getLocalPort()); }

    /** Bytes relayed so far: {@code [to the server, to the clients, connections accepted]}. */
    long[] relayed() { return new long[] {toServer.get(), toClients.get(), connections.get()}; }

    /** Resets every relayed connection and refuses new ones. */
    void cut() {
        cut = true;
        for (Socket s : open) abort(s);
        open.clear();
    }

    /**
     * A blackhole: every relayed connection goes silent in both directions without being closed (half-open, as
     * behind a drop rule), and new connections are accepted and left hanging. After {@link #restore()} new
     * connections work again but the silenced ones stay dead, like connections whose peer state was lost.
     */
    void blackhole() {
        blackholed = true;
        deadBefore = epoch.incrementAndGet();
    }

    void restore() {
        cut = false;
        blackholed = false;
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException closed) {
                return;
            }
            if (cut) {
                abort(client);
                continue;
            }
            if (blackholed) {
                held.add(client);
                continue;
            }
            try {
                Socket server = new Socket();
                server.connect(upstream, 5_000);
                open.add(client);
                open.add(server);
                long born = epoch.get();
                connections.incrementAndGet();
                pump(client, server, born, toServer);
                pump(server, client, born, toClients);
            } catch (IOException e) {
                abort(client);
            }
        }
    }

    private void pump(Socket from, Socket to, long born, java.util.concurrent.atomic.AtomicLong relayed) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream()) {
                OutputStream out = to.getOutputStream();
                for (int n; (n = in.read(buf)) >= 0; ) {
                    if (born < deadBefore) continue;
                    relayed.addAndGet(n);
                    out.write(buf, 0, n);
                    out.flush();
                }
                // A dead connection passes nothing on, not even its end: its peer must find out by itself.
                if (born >= deadBefore) to.shutdownOutput();
            } catch (IOException closed) {
                if (born >= deadBefore) abort(to);
            }
        }, "api-relay-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Close with RST (linger 0), as a dropped connection looks to its peer; {@link FaultRelay} drops its own so too. */
    static void abort(Socket s) {
        try {
            s.setSoLinger(true, 0);
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override public void close() throws IOException {
        listener.close();
        cut();
        for (Socket s : held) abort(s);
        try {
            acceptor.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
