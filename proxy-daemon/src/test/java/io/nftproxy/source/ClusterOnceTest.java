package io.nftproxy.source;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.nftproxy.source.api.ApiServer;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code render}/{@code trace}/{@code conntrack --kubeconfig} read the cluster once: a cause that waiting does not
 * change fails at once, named as the daemon names it; a server that says nothing fails at the request timeout.
 */
class ClusterOnceTest {
    private static ApiServer api(String url) { return ApiServer.of(new ConfigBuilder(Config.empty()).withMasterUrl(url).build()); }

    @Test
    void aRefusedPortFailsAtOnceWithTheCause() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        long t0 = System.nanoTime();
        ClusterOnce.NotRead e = assertThrows(ClusterOnce.NotRead.class,
                () -> ClusterOnce.read(api("http://127.0.0.1:" + port), "node-a", Duration.ofSeconds(60)));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < 5_000, "failed after " + ms + " ms, not at once");
        assertTrue(e.getMessage().startsWith("API server http://127.0.0.1:" + port + " unusable: connection refused or unreachable"), e.getMessage());
    }

    @Test
    void aNameThatDoesNotResolveFailsAtOnceAsADnsFailure() throws Exception {
        long t0 = System.nanoTime();
        ClusterOnce.NotRead e = assertThrows(ClusterOnce.NotRead.class,
                () -> ClusterOnce.read(api("http://nftp-no-such-host.invalid:6443"), "node-a", Duration.ofSeconds(60)));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < 10_000, "failed after " + ms + " ms, not at once");
        assertTrue(e.getMessage().contains("unusable: DNS failure: the server's host name does not resolve"), e.getMessage());
    }

    @Test
    void aSilentServerFailsAtTheRequestTimeout() throws Exception {
        // Accepts the connection (the kernel's backlog does) and never answers.
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String url = "http://127.0.0.1:" + silent.getLocalPort();
            long t0 = System.nanoTime();
            ClusterOnce.NotRead e = assertThrows(ClusterOnce.NotRead.class, () -> ClusterOnce.read(api(url), "node-a", Duration.ofSeconds(2)));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 2_000 && ms < 10_000, "failed after " + ms + " ms, not at the 2 s timeout");
            assertTrue(e.getMessage().startsWith("API server " + url + ": ") && e.getMessage().contains("within 2 s"), e.getMessage());
        }
    }
}
