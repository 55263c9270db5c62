package io.nftproxy.source.api;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A kubeconfig that does not lead to a server is refused naming the file, the missing name and what the file has;
 * fabric8 alone falls back to https://kubernetes.default.svc without a word (issue 24).
 */
class KubeconfigCheckTest {
    @TempDir Path dir;

    private static final String GOOD = """
            apiVersion: v1
            kind: Config
            clusters: [{name: kubernetes, cluster: {server: "https://192.0.2.10:6443"}}]
            contexts: [{name: admin@kubernetes, context: {cluster: kubernetes, user: admin}}, {name: other, context: {cluster: kubernetes}}]
            current-context: admin@kubernetes
            users: [{name: admin, user: {token: abc}}]
            """;

    private Path write(String text) throws IOException {
        Path f = dir.resolve("kubeconfig.conf");
        Files.writeString(f, text);
        return f;
    }

    @Test
    void aCompleteKubeconfigNamesItsServerAndWhereItCameFrom() throws IOException {
        Path f = write(GOOD);
        ApiServer api = ApiServer.fromKubeconfig(f);
        assertEquals("https://192.0.2.10:6443", api.url());
        assertEquals("kubeconfig " + f + ", context admin@kubernetes", api.origin());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "current-context: admin@kubernetes | current-context: nope | current-context \"nope\" is not one of its contexts (admin@kubernetes, other)",
            "current-context: admin@kubernetes | current-context: \"\" | no current-context; allowed: one of its contexts (admin@kubernetes, other)",
            "cluster: kubernetes, user: admin | cluster: gone, user: admin | context \"admin@kubernetes\" names cluster \"gone\", which is not one of its clusters (kubernetes)",
            "server: \"https://192.0.2.10:6443\" | insecure-skip-tls-verify: true | cluster \"kubernetes\" (of context \"admin@kubernetes\") has no server",
            "user: admin} | user: root} | context \"admin@kubernetes\" names user \"root\", which is not one of its users (admin)",
    })
    void aKubeconfigThatLeadsNowhereIsRefusedWithWhatItHas(String from, String to, String reason) throws IOException {
        Path f = write(GOOD.replace(from, to));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ApiServer.fromKubeconfig(f));
        assertEquals("kubeconfig " + f + ": " + reason, e.getMessage());
        assertEquals(reason, ApiServer.reason(e));
    }

    @Test
    void anUnreadableOrMalformedKubeconfigSaysWhy() throws IOException {
        assertEquals("kubeconfig " + dir.resolve("none") + ": cannot be read: no such file",
                assertThrows(IllegalArgumentException.class, () -> ApiServer.fromKubeconfig(dir.resolve("none"))).getMessage());
        assertEquals("kubeconfig " + dir + ": cannot be read: is a directory",
                assertThrows(IllegalArgumentException.class, () -> ApiServer.fromKubeconfig(dir)).getMessage());
        Path tab = write("apiVersion: v1\nkind: Config\nclusters:\n\t- name: c\n");
        assertEquals("kubeconfig " + tab + ": a tab character at line 4, column 1: YAML indents with spaces",
                assertThrows(IllegalArgumentException.class, () -> ApiServer.fromKubeconfig(tab)).getMessage());
        Path empty = write("");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ApiServer.fromKubeconfig(empty)).getMessage()
                .startsWith("kubeconfig " + empty + ": the file is empty; it should hold a kubeconfig"));
    }

    /** Without --kubeconfig: which of $KUBECONFIG, ~/.kube/config and the pod's environment gave the URL, or none. */
    @Test
    void theAutoConfiguredOriginSaysWhatWasFoundAndWhatWasMissing() throws IOException {
        Path home = Files.createDirectories(dir.resolve("home"));
        Path sa = Files.createDirectories(dir.resolve("sa"));
        assertEquals("no --kubeconfig and no ~/.kube/config (" + home.resolve(".kube/config") + "): in-cluster configuration: "
                + "KUBERNETES_SERVICE_HOST unset, so the client library's default URL, no token (" + sa.resolve("token")
                + " missing), no CA file (" + sa.resolve("ca.crt") + " missing: the JVM's trusted CAs)",
                AutoConfigOrigin.describe(Map.<String, String>of()::get, home, sa));

        Files.writeString(sa.resolve("token"), "t");
        Files.writeString(sa.resolve("ca.crt"), "c");
        assertEquals("no --kubeconfig and no ~/.kube/config (" + home.resolve(".kube/config") + "): in-cluster configuration: "
                + "KUBERNETES_SERVICE_HOST=10.96.0.1, KUBERNETES_SERVICE_PORT=443, token " + sa.resolve("token") + ", CA " + sa.resolve("ca.crt"),
                AutoConfigOrigin.describe(Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "443")::get, home, sa));

        Path kc = write(GOOD);
        assertEquals("no --kubeconfig: $KUBECONFIG=" + kc, AutoConfigOrigin.describe(Map.of("KUBECONFIG", kc + ":/elsewhere")::get, home, sa));
        Files.createDirectories(home.resolve(".kube"));
        Files.writeString(home.resolve(".kube/config"), GOOD);
        assertEquals("no --kubeconfig: ~/.kube/config (" + home.resolve(".kube/config") + ")",
                AutoConfigOrigin.describe(Map.<String, String>of()::get, home, sa));
    }
}
