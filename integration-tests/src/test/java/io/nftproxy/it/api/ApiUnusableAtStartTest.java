package io.nftproxy.it.api;

import io.nftproxy.it.daemon.DaemonProcess;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 23: {@code nftproxy run} (a child JVM in a throwaway namespace) whose kubeconfig names an API server it
 * cannot use — a port nobody listens on, a host name that does not resolve, a server whose certificate another CA
 * signed — keeps running: one WARN line naming the URL and the root cause however often it retries, /livez 200,
 * /healthz 503 with that cause in its body, and nothing written to the kernel (a table already there stays as it is).
 * That it then programs the cluster once the server can be reached is DownAtStartAgainstApiServerTest's, at 1,000 Services.
 */
class ApiUnusableAtStartTest {
    private static final int HEALTHZ = 10256;
    /** Several retries at the back-off's pace (0.5 s doubling, capped at 2 s while nothing is reached). */
    private static final Duration RETRYING = Duration.ofSeconds(8);
    @TempDir Path dir;

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailable();
    }

    @Test
    void aClosedPortIsRetriedAndNamedConnectionRefusedAndAnExistingTableStays() throws Exception {
        LoopbackCertificates ca = LoopbackCertificates.generate(dir.resolve("ca"));
        try (KernelNamespace ns = node(); NetnsThread in = NetnsThread.start(ns.handle())) {
            // A table from an earlier run: an outage at start must leave it exactly as it is.
            ns.load("table ip kube-proxy {\n  set earlier { type ipv4_addr; elements = { 192.0.2.1 } }\n}\n");
            String before = ns.nftOut("list", "ruleset");
            int port = in.call(ApiUnusableAtStartTest::freeLoopbackPort);
            String url = "https://127.0.0.1:" + port;
            ridesItOut(ns, in, kubeconfig(url, ca.caCert()), url, "connection refused or unreachable");
            assertEquals(before, ns.nftOut("list", "ruleset"), "the table already there is untouched");
        }
    }

    @Test
    void aNameThatDoesNotResolveIsNamedAsADnsFailure() throws Exception {
        LoopbackCertificates ca = LoopbackCertificates.generate(dir.resolve("ca"));
        try (KernelNamespace ns = node(); NetnsThread in = NetnsThread.start(ns.handle())) {
            String url = "https://nftp-api-server.invalid:6443";
            ridesItOut(ns, in, kubeconfig(url, ca.caCert()), url, "DNS failure: the server's host name does not resolve");
            assertEquals("", ns.nftOut("list", "ruleset").strip(), "nothing written");
        }
    }

    @Test
    void aServerOfAnotherCaIsNamedAsUntrusted() throws Exception {
        LoopbackCertificates serving = LoopbackCertificates.generate(dir.resolve("serving"));
        LoopbackCertificates other = LoopbackCertificates.generate(dir.resolve("other"));
        try (KernelNamespace ns = node(); NetnsThread in = NetnsThread.start(ns.handle())) {
            int port = in.call(ApiUnusableAtStartTest::freeLoopbackPort);
            Process tls = new ProcessBuilder("ip", "netns", "exec", ns.name(), "openssl", "s_server", "-quiet",
                    "-accept", "127.0.0.1:" + port, "-cert", serving.serverCert().toString(), "-key", serving.serverKey().toString(), "-www")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            try {
                awaitListening(in, port, tls);
                String url = "https://127.0.0.1:" + port;
                String log = ridesItOut(ns, in, kubeconfig(url, other.caCert()), url, "TLS: the server's certificate is not trusted by the configured CA");
                assertTrue(log.contains("trust anchors") || log.contains("certification path"), "the certificate path cause: " + log);
                assertEquals("", ns.nftOut("list", "ruleset").strip(), "nothing written");
            } finally {
                tls.destroyForcibly();
                tls.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** Runs the daemon against {@code url} for a while; asserts it keeps running and says why; returns its log. */
    private static String ridesItOut(KernelNamespace ns, NetnsThread in, Path kubeconfig, String url, String cause) throws Exception {
        try (DaemonProcess d = DaemonProcess.start(ns, java -> java, Map.of(), "--kubeconfig", kubeconfig.toString(),
                "--hostname-override", "k8s-node-1", "--healthz-bind-address", "127.0.0.1:" + HEALTHZ,
                "--metrics-bind-address", "127.0.0.1:0", "--conntrack-max-per-core=0")) {
            String warn = "API server unusable url=" + url + " ";
            long t0 = System.nanoTime();
            assertTrue(d.awaitLog(warn, Duration.ofSeconds(60)), "no WARN naming " + url + ":\n" + d.log());
            long firstWarnMs = (System.nanoTime() - t0) / 1_000_000;
            Thread.sleep(RETRYING.toMillis());
            assertTrue(d.alive(), "the daemon exited:\n" + d.log());
            String log = d.log();
            List<String> warns = log.lines().filter(l -> l.contains(warn)).toList();
            assertEquals(1, warns.size(), "one WARN per change of cause, however many retries:\n" + log);
            assertTrue(warns.get(0).contains("level=WARN") && warns.get(0).contains(cause), warns.get(0));
            assertFalse(log.contains("\tat ") || log.contains("Exception"), "no stack trace, no class names:\n" + log);

            NamespaceHttp.Answer livez = NamespaceHttp.get(in, HEALTHZ, "/livez");
            NamespaceHttp.Answer healthz = NamespaceHttp.get(in, HEALTHZ, "/healthz");
            assertEquals(200, livez.status(), "alive while it waits: " + livez.body());
            assertEquals(503, healthz.status(), healthz.body());
            assertTrue(healthz.body().contains("\"cause\": \"API server " + url + " unusable: " + cause), healthz.body());
            assertFalse(ns.nftOut("list", "tables").contains("table ip6 kube-proxy"), "nothing written");
            System.out.printf("API unusable at start (%s): still running after %d s, first WARN %d ms after the launch: %s%n  /healthz 503 %s%n",
                    cause, (System.nanoTime() - t0) / 1_000_000_000, firstWarnMs, warns.get(0), healthz.body());
            return log;
        }
    }

    private static KernelNamespace node() throws IOException {
        KernelNamespace ns = KernelNamespace.create("apidead");
        ns.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
        return ns;
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

    /** A loopback port nothing listens on, from a thread inside the namespace. */
    static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void awaitListening(NetnsThread in, int port, Process p) throws Exception {
        for (int i = 0; i < 100 && p.isAlive(); i++) {
            boolean up = in.call(() -> {
                try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                    return true;
                } catch (IOException e) {
                    return false;
                }
            });
            if (up) return;
            Thread.sleep(50);
        }
        throw new AssertionError("openssl s_server did not listen on " + port);
    }
}
