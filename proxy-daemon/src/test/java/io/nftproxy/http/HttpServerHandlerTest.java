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
    void connectionsBeyondTheLimitAreClosedAndProbesStillGetThrough() throws Exception {
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
                // The first four are held open (idle, within the read timeout); every later one is closed by the server.
                int closed = 0;
                for (java.net.Socket sock : held.subList(max, held.size())) {
                    if (sock.getInputStream().read() == -1) closed++;
                }
                assertEquals(held.size() - max, closed);
            } finally {
                for (java.net.Socket sock : held) sock.close();
            }
            // Once the flood is gone, a probe is served again.
            HttpClient c = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            HttpResponse<String> r = null;
            for (int attempt = 0; attempt < 50 && (r == null || r.statusCode() != 200); attempt++) {
                try {
                    r = c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/proxyMode"))
                            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                } catch (java.io.IOException e) {
                    Thread.sleep(100);   // the server may not have seen every close yet
                }
            }
            assertEquals(200, r.statusCode());
        }
    }
}
