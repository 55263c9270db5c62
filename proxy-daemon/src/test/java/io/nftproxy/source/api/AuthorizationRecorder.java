package io.nftproxy.source.api;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * For each test, a loopback HTTP server that answers every request 200 {@code {}} and keeps the Authorization
 * header each one sent: what a client's credentials look like on the wire. Register it with
 * {@code @RegisterExtension}.
 */
final class AuthorizationRecorder implements BeforeEachCallback, AfterEachCallback {
    /** In arrival order; {@code "null"} for a request without the header. */
    final List<String> authorizations = new CopyOnWriteArrayList<>();
    private HttpServer server;

    @Override public void beforeEach(ExtensionContext context) throws IOException {
        authorizations.clear();
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", ex -> {
            authorizations.add(String.valueOf(ex.getRequestHeaders().getFirst("Authorization")));
            byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.start();
    }

    @Override public void afterEach(ExtensionContext context) {
        if (server != null) server.stop(0);
    }

    int port() { return server.getAddress().getPort(); }
}
