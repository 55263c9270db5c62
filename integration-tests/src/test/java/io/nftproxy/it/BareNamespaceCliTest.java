package io.nftproxy.it;

import io.nftproxy.cli.ExitCodes;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.KernelNamespace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A live-cluster command run where an operator may well run it: a network namespace with only lo, under a host
 * name nothing resolves (its own UTS namespace). Its stderr is the command's own lines: no Log4j stack trace about
 * the host name, and the unreachable API server's warning says what the command does, not what the daemon does.
 */
class BareNamespaceCliTest {
    private static final String KUBECONFIG = """
            apiVersion: v1
            kind: Config
            clusters:
            - name: dead
              cluster:
                server: https://127.0.0.1:1
                insecure-skip-tls-verify: true
            users:
            - name: nobody
              user:
                token: not-a-token
            contexts:
            - name: dead
              context:
                cluster: dead
                user: nobody
            current-context: dead
            """;

    @Test
    void renderAgainstAnUnreachableServerSaysSoInTheCommandsWordsWithoutLog4jNoise(@TempDir Path tmp) throws Exception {
        KernelTests.assumeAvailable("unshare");
        Path kubeconfig = Files.writeString(tmp.resolve("dead.kubeconfig"), KUBECONFIG);
        try (KernelNamespace ns = KernelNamespace.create("bare")) {
            ns.ip("link", "set", "lo", "up");
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> jvm = List.of(java, "-Dlog4j2.configurationFile=log4j2.xml", "-cp", System.getProperty("java.class.path"),
                    "io.nftproxy.cli.Main", "render", "--kubeconfig", kubeconfig.toString(), "--hostname-override", "k8s-node-1",
                    "--request-timeout", "2s");
            String command = "hostname nftp-unresolvable-host && exec \"$@\"";
            List<String> argv = new java.util.ArrayList<>(List.of("ip", "netns", "exec", ns.name(), "unshare", "--uts", "sh", "-c", command, "sh"));
            argv.addAll(jvm);
            KernelNamespace.Result r = KernelNamespace.run(Duration.ofSeconds(60), null, argv.toArray(String[]::new));

            assertEquals(ExitCodes.INPUT_UNREADABLE, r.exitCode(), r.stderr());
            assertFalse(r.stderr().contains("Could not determine local host name"), r.stderr());
            assertTrue(r.stderr().lines().noneMatch(l -> l.startsWith("\tat ")), "a stack trace:\n" + r.stderr());
            // A refused port fails the command at once (issue 23), in one line of its own: no retry, so no WARN about one.
            assertEquals(List.of(), r.stderr().lines().filter(l -> l.contains("API server unusable")).toList(), r.stderr());
            assertTrue(r.stderr().lines().anyMatch(l -> l.startsWith("nftproxy: --kubeconfig")
                    && l.contains("API server https://127.0.0.1:1 unusable: connection refused")), r.stderr());
        }
    }
}
