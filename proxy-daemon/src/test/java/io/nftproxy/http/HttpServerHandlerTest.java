package io.nftproxy.http;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

class HttpServerHandlerTest {
    private static Response route(String path) {
        return switch (path) {
            case "/healthz" -> Response.json(200, "{}");
            case "/proxyMode" -> Response.text(200, "nftables");
            default -> null;
        };
    }

    private static FullHttpResponse request(String uri) {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpServerHandler(HttpServerHandlerTest::route));
        ch.writeInbound(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, uri));
        FullHttpResponse r = ch.readOutbound();
        FullHttpResponse copy = r.copy();
        r.release();
        assertFalse(ch.finishAndReleaseAll(), "nothing left over in the channel");
        return copy;
    }

    @Test
    void routesByPathIgnoringTheQuery() {
        FullHttpResponse r = request("/healthz?verbose=1");
        assertEquals(200, r.status().code());
        assertEquals("application/json", r.headers().get("Content-Type"));
        assertEquals("nosniff", r.headers().get("X-Content-Type-Options"));
        assertEquals("{}", r.content().toString(StandardCharsets.UTF_8));
        r.release();
    }

    @Test
    void unknownPathIs404() {
        FullHttpResponse r = request("/nope");
        assertEquals(404, r.status().code());
        r.release();
    }

    @Test
    void servesOverARealLoopbackSocket() throws Exception {
        try (HttpServer s = HttpServer.start("test server", new InetSocketAddress("127.0.0.1", 0), HttpServerHandlerTest::route)) {
            HttpClient c = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.address().getPort() + "/proxyMode"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            assertEquals("nftables", r.body());
            assertEquals("nosniff", r.headers().firstValue("X-Content-Type-Options").orElse(null));
            assertEquals("text/plain; charset=utf-8", r.headers().firstValue("Content-Type").orElse(null));
        }
    }

    @Test
    void aBindFailureNamesTheServerTheAddressAndTheCause() throws Exception {
        try (HttpServer first = HttpServer.start("test server", new java.net.InetSocketAddress("127.0.0.1", 0), HttpServerHandlerTest::route)) {
            int port = first.address().getPort();
            java.net.BindException inUse = org.junit.jupiter.api.Assertions.assertThrows(java.net.BindException.class,
                    () -> HttpServer.start("healthz server", new java.net.InetSocketAddress("127.0.0.1", port), HttpServerHandlerTest::route));
            assertEquals("cannot bind the healthz server to 127.0.0.1:" + port + ": address already in use (EADDRINUSE)",
                    inUse.getMessage());
        }
        // A documentation address no interface here has.
        java.net.BindException notLocal = org.junit.jupiter.api.Assertions.assertThrows(java.net.BindException.class,
                () -> HttpServer.start("metrics server", new java.net.InetSocketAddress("192.0.2.1", 10249), HttpServerHandlerTest::route));
        assertEquals("cannot bind the metrics server to 192.0.2.1:10249: not an address of this host (EADDRNOTAVAIL)",
                notLocal.getMessage());
    }

    @Test
    void aFloodOfHeldConnectionsLosesItsOldestAndAProbeIsStillAnswered() throws Exception {
        int max = 4;
        try (HttpServer s = HttpServer.start("test server", new InetSocketAddress("127.0.0.1", 0), HttpServerHandlerTest::route, max)) {
            int port = s.address().getPort();
            java.util.List<java.net.Socket> held = new java.util.ArrayList<>();
            try {
                for (int i = 0; i < 20; i++) {
                    java.net.Socket sock = new java.net.Socket("127.0.0.1", port);
                    sock.setSoTimeout(3000);
                    held.add(sock);
                }
                // A probe while the flood holds the server's connections: it is answered, and closes an idle one.
                assertEquals("nftables", rawGet(port, "/proxyMode"));
                // Each connection beyond the cap closed the oldest: the first 17 (16 by the flood, 1 by the probe) are gone.
                int closed = 0;
                for (java.net.Socket sock : held.subList(0, held.size() - max + 1)) {
                    if (sock.getInputStream().read() == -1) closed++;
                }
                assertEquals(held.size() - max + 1, closed);
                // The newest three are still open.
                for (java.net.Socket sock : held.subList(held.size() - max + 1, held.size())) {
                    sock.setSoTimeout(200);
                    org.junit.jupiter.api.Assertions.assertThrows(java.net.SocketTimeoutException.class, () -> sock.getInputStream().read());
                }
            } finally {
                for (java.net.Socket sock : held) sock.close();
            }
        }
    }

    @Test
    void theProcessBudgetBoundsAllServersTogether() throws Exception {
        DescriptorBudget budget = new DescriptorBudget(3);
        ConnectionLimit a = new ConnectionLimit("a", 10, budget), b = new ConnectionLimit("b", 10, budget);
        io.netty.channel.embedded.EmbeddedChannel a1 = new io.netty.channel.embedded.EmbeddedChannel(a),
                a2 = new io.netty.channel.embedded.EmbeddedChannel(a), b1 = new io.netty.channel.embedded.EmbeddedChannel(b);
        assertEquals(3, budget.taken());
        // b's next connection takes b's oldest share; a connection of a server with none left is closed at once.
        io.netty.channel.embedded.EmbeddedChannel b2 = new io.netty.channel.embedded.EmbeddedChannel(b);
        assertFalse(b1.isOpen());
        org.junit.jupiter.api.Assertions.assertTrue(b2.isOpen());
        assertEquals(3, budget.taken());
        ConnectionLimit c = new ConnectionLimit("c", 10, budget);
        io.netty.channel.embedded.EmbeddedChannel c1 = new io.netty.channel.embedded.EmbeddedChannel(c);
        assertFalse(c1.isOpen());
        assertEquals(1, c.closedEarly());
        a1.close();
        assertEquals(2, budget.taken());
        for (var ch : java.util.List.of(a2, b2, c1)) ch.finishAndReleaseAll();
        assertEquals(0, budget.taken());
    }

    @Test
    void theBudgetIsHalfOfWhatIsFreeAtStartWithinBounds() {
        assertEquals(437, DescriptorBudget.forLimits(1024, 150));
        assertEquals(DescriptorBudget.MIN, DescriptorBudget.forLimits(64, 60));
        assertEquals(DescriptorBudget.MAX, DescriptorBudget.forLimits(1 << 20, 100));
    }

    /** One request on a fresh socket, as a prober sends it. */
    private static String rawGet(int port, String path) throws java.io.IOException {
        try (java.net.Socket sock = new java.net.Socket("127.0.0.1", port)) {
            sock.setSoTimeout(3000);
            sock.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            String r = new String(sock.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            return r.substring(r.indexOf("\r\n\r\n") + 4);
        }
    }
}
