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
        try (HttpServer s = HttpServer.start(new InetSocketAddress("127.0.0.1", 0), HttpServerHandlerTest::route)) {
            HttpClient c = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.address().getPort() + "/proxyMode"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            assertEquals("nftables", r.body());
            assertEquals("nosniff", r.headers().firstValue("X-Content-Type-Options").orElse(null));
            assertEquals("text/plain; charset=utf-8", r.headers().firstValue("Content-Type").orElse(null));
        }
    }
}
