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
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A kubeconfig whose user has a tokenFile, as kubeadm writes for kube-proxy's DaemonSet: the token goes out as a
 * bearer token, re-read on each request (projected tokens rotate in place). Found on a real node, where nftproxy
 * deployed with kubeadm's ConfigMap was "system:anonymous".
 */
class ApiServerTokenFileTest {
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

    private Path kubeconfig(String user) throws IOException {
        Path kc = dir.resolve("kubeconfig.conf");
        Files.writeString(kc, """
                apiVersion: v1
                kind: Config
                clusters: [{name: default, cluster: {server: "http://127.0.0.1:%d"}}]
                contexts: [{name: default, context: {cluster: default, user: default}}]
                current-context: default
                users: [{name: default, user: %s}]
                """.formatted(server.getAddress().getPort(), user));
        return kc;
    }

    private void get(ApiServer api) throws Exception {
        HttpResponse<InputStream> r = api.get("api", Duration.ofSeconds(30), Duration.ofSeconds(5));
        try (InputStream in = r.body()) { in.readAllBytes(); }
        assertEquals(200, r.statusCode());
    }

    @Test
    void sendsTheTokenFileAndRereadsItWhenRotated() throws Exception {
        Path token = dir.resolve("token");
        Files.writeString(token, "first-token\n");
        ApiServer api = ApiServer.fromKubeconfig(kubeconfig("{tokenFile: " + token + "}"));
        get(api);
        Files.writeString(token, "rotated-token");
        get(api);
        assertEquals(List.of("Bearer first-token", "Bearer rotated-token"), authorizations);
    }

    @Test
    void aRelativeTokenFileResolvesAgainstTheKubeconfigsDirectory() throws Exception {
        Files.writeString(dir.resolve("sa-token"), "relative-token");
        get(ApiServer.fromKubeconfig(kubeconfig("{tokenFile: sa-token}")));
        assertEquals(List.of("Bearer relative-token"), authorizations);
    }

    @Test
    void anInlineTokenWinsOverTheTokenFile() throws Exception {
        Files.writeString(dir.resolve("sa-token"), "file-token");
        get(ApiServer.fromKubeconfig(kubeconfig("{token: inline-token, tokenFile: sa-token}")));
        assertEquals(List.of("Bearer inline-token"), authorizations);
    }

    @Test
    void aMissingTokenFileIsAnErrorNamingIt() throws Exception {
        ApiServer api = ApiServer.fromKubeconfig(kubeconfig("{tokenFile: /nonexistent/nftp-token}"));
        IOException e = assertThrows(IOException.class, () -> get(api));
        assertTrue(e.getMessage().contains("tokenFile /nonexistent/nftp-token cannot be read"), e.getMessage());
        assertTrue(authorizations.isEmpty(), "no request without the credentials: " + authorizations);
    }
}
