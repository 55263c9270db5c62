package io.nftproxy.source.api;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** kube-proxy's --master: the kubeconfig's server replaced, its credentials kept. */
class ApiServerMasterTest {
    private HttpServer server;
    private final List<String> authorizations = new CopyOnWriteArrayList<>();
    @TempDir Path dir;

    @BeforeEach
    void start() throws IOException {
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

    @AfterEach
    void stop() { server.stop(0); }

    @Test
    void masterReplacesTheServerAndKeepsTheCredentials() throws Exception {
        Path kc = dir.resolve("kubeconfig.conf");
        // The kubeconfig's own server: nobody listens on port 1.
        Files.writeString(kc, """
                apiVersion: v1
                kind: Config
                clusters: [{name: default, cluster: {server: "http://127.0.0.1:1"}}]
                contexts: [{name: default, context: {cluster: default, user: default}}]
                current-context: default
                users: [{name: default, user: {token: kubeconfig-token}}]
                """);
        URI master = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
        ApiServer api = ApiServer.fromKubeconfig(kc).at(master);
        assertEquals(master.toString(), api.url());
        HttpResponse<InputStream> r = api.get("api", Duration.ofSeconds(30), Duration.ofSeconds(5));
        try (InputStream in = r.body()) { in.readAllBytes(); }
        assertEquals(200, r.statusCode());
        assertEquals(List.of("Bearer kubeconfig-token"), authorizations);
    }
}
