package io.nftproxy.source.api;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A kubeconfig whose user has a tokenFile, as kubeadm writes for kube-proxy's DaemonSet: the token goes out as a
 * bearer token, re-read on each request (projected tokens rotate in place). Found on a real node, where nftproxy
 * deployed with kubeadm's ConfigMap was "system:anonymous".
 */
class ApiServerTokenFileTest {
    @RegisterExtension final AuthorizationRecorder server = new AuthorizationRecorder();
    @TempDir Path dir;

    private Path kubeconfig(String user) throws IOException {
        Path kc = dir.resolve("kubeconfig.conf");
        Files.writeString(kc, """
                apiVersion: v1
                kind: Config
                clusters: [{name: default, cluster: {server: "http://127.0.0.1:%d"}}]
                contexts: [{name: default, context: {cluster: default, user: default}}]
                current-context: default
                users: [{name: default, user: %s}]
                """.formatted(server.port(), user));
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
        assertEquals(List.of("Bearer first-token", "Bearer rotated-token"), server.authorizations);
    }

    @Test
    void aRelativeTokenFileResolvesAgainstTheKubeconfigsDirectory() throws Exception {
        Files.writeString(dir.resolve("sa-token"), "relative-token");
        get(ApiServer.fromKubeconfig(kubeconfig("{tokenFile: sa-token}")));
        assertEquals(List.of("Bearer relative-token"), server.authorizations);
    }

    @Test
    void anInlineTokenWinsOverTheTokenFile() throws Exception {
        Files.writeString(dir.resolve("sa-token"), "file-token");
        get(ApiServer.fromKubeconfig(kubeconfig("{token: inline-token, tokenFile: sa-token}")));
        assertEquals(List.of("Bearer inline-token"), server.authorizations);
    }

    @Test
    void aMissingTokenFileIsAnErrorNamingIt() throws Exception {
        ApiServer api = ApiServer.fromKubeconfig(kubeconfig("{tokenFile: /nonexistent/nftp-token}"));
        IOException e = assertThrows(IOException.class, () -> get(api));
        assertTrue(e.getMessage().contains("tokenFile /nonexistent/nftp-token cannot be read"), e.getMessage());
        assertTrue(server.authorizations.isEmpty(), "no request without the credentials: " + server.authorizations);
    }
}
