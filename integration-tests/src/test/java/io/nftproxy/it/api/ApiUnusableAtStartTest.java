package io.nftproxy.it.api;

import io.nftproxy.cli.ExitCodes;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.it.CliRun;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 10 row 10: {@code nftproxy run} with a kubeconfig whose server is dead, or presents a certificate of another
 * CA, exits within seconds with one line naming the URL and the root cause, no stack trace, exit code 10 (ExitCodes.API_UNUSABLE), before it
 * touches nft (the command line still names a throwaway namespace, so nothing could reach the host's tables).
 */
class ApiUnusableAtStartTest {
    @TempDir Path dir;

    @BeforeAll
    static void kernelAvailable() {
        String cause = KernelNamespace.unavailabilityCause().orElse(null);
        if (cause != null) System.out.println("SKIPPED ApiUnusableAtStartTest: " + cause);
        Assumptions.assumeTrue(cause == null, cause);
    }

    @Test
    void aClosedPortIsNamedWithConnectionRefused() throws Exception {
        LoopbackCertificates ca = LoopbackCertificates.generate(dir.resolve("ca"));
        int port = closedPort();
        String url = "https://127.0.0.1:" + port;
        CliRun r = runAgainst(kubeconfig(url, ca.caCert()));
        assertEquals(ExitCodes.API_UNUSABLE, r.exit(), r.err());
        assertOneClearLine(r, url, "connection refused");
    }

    @Test
    void aServerOfAnotherCaIsNamedAsUntrusted() throws Exception {
        LoopbackCertificates serving = LoopbackCertificates.generate(dir.resolve("serving"));
        LoopbackCertificates other = LoopbackCertificates.generate(dir.resolve("other"));
        int port = closedPort();
        Process tls = new ProcessBuilder("openssl", "s_server", "-quiet", "-accept", "127.0.0.1:" + port,
                "-cert", serving.serverCert().toString(), "-key", serving.serverKey().toString(), "-www")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        try {
            awaitListening(port, tls);
            String url = "https://127.0.0.1:" + port;
            CliRun r = runAgainst(kubeconfig(url, other.caCert()));
            assertEquals(ExitCodes.API_UNUSABLE, r.exit(), r.err());
            assertOneClearLine(r, url, "the server's certificate is not trusted by the configured CA");
            assertTrue(r.err().contains("trust anchors") || r.err().contains("certification path"), "the certificate path cause: " + r.err());
        } finally {
            tls.destroyForcibly();
            tls.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private CliRun runAgainst(Path kubeconfig) throws IOException {
        try (KernelNamespace ns = KernelNamespace.create("apidead")) {
            long t0 = System.nanoTime();
            CliRun r = CliRun.of("run", "--kubeconfig", kubeconfig.toString(), "--hostname-override", "k8s-node-1",
                    "--healthz-bind-address", "127.0.0.1:0", "--metrics-bind-address", "127.0.0.1:0", "--netns", ns.name());
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.out.printf("API unusable at start: exit %d after %d ms: %s", r.exit(), ms, r.err());
            assertTrue(ms < 6000, "took " + ms + " ms");
            assertEquals("", ns.nftOut("list", "ruleset").strip(), "nothing written");
            return r;
        }
    }

    private static void assertOneClearLine(CliRun r, String url, String cause) {
        String line = r.err().lines().filter(l -> l.startsWith("nftproxy: cannot start: API server " + url + " unusable: "))
                .findFirst().orElse(null);
        assertTrue(line != null && line.contains(cause), r.err());
        assertTrue(!r.err().contains("\tat ") && !r.err().contains("Exception:"), "no stack trace, no class names: " + r.err());
    }

    private Path kubeconfig(String url, Path ca) throws IOException {
        return Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters:
                - name: test
                  cluster:
                    server: %s
                    certificate-authority: %s
                users:
                - name: proxy
                  user:
                    token: not-a-real-token
                contexts:
                - name: proxy
                  context: {cluster: test, user: proxy}
                current-context: proxy
                """.formatted(url, ca));
    }

    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static void awaitListening(int port, Process p) throws Exception {
        for (int i = 0; i < 100 && p.isAlive(); i++) {
            try (Socket s = new Socket("127.0.0.1", port)) {
                return;
            } catch (IOException e) {
                Thread.sleep(50);
            }
        }
        throw new AssertionError("openssl s_server did not listen on " + port);
    }
}
