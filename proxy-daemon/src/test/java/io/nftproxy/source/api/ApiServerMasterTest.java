package io.nftproxy.source.api;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** kube-proxy's --master: the kubeconfig's server replaced, its credentials kept. */
class ApiServerMasterTest {
    @RegisterExtension final AuthorizationRecorder server = new AuthorizationRecorder();
    @TempDir Path dir;

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
        URI master = URI.create("http://127.0.0.1:" + server.port());
        ApiServer api = ApiServer.fromKubeconfig(kc).at(master);
        assertEquals(master.toString(), api.url());
        HttpResponse<InputStream> r = api.get("api", Duration.ofSeconds(30), Duration.ofSeconds(5));
        try (InputStream in = r.body()) { in.readAllBytes(); }
        assertEquals(200, r.statusCode());
        assertEquals(List.of("Bearer kubeconfig-token"), server.authorizations);
    }
}
