package io.nftproxy.it.api;

import io.nftproxy.netlink.KernelTests;
import io.nftproxy.it.release.ReleaseTarball;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * release/README.md's recipe for the systemd route's kubeconfig, its own code blocks run as written with kubectl and
 * an admin kubeconfig (CA embedded, as kubeadm's admin.conf has it) against a real kube-apiserver, with a
 * kube-controller-manager running only the token controller that fills in the ServiceAccount's token Secret. The
 * kubeconfig it writes authenticates over TLS and has kube-proxy's rights (system:node-proxier), no more. kubectl and
 * kube-controller-manager come from the node harness's build (integration-tests/node/build.sh); skipped without them.
 */
class ReleaseReadmeKubeconfigTest {
    private static final Path README = Path.of("..", "release", "README.md").toAbsolutePath().normalize();
    private static final Pattern BLOCK = Pattern.compile("```\\n(.*?)```", Pattern.DOTALL);

    @TempDir
    Path tmp;

    private static Path nodeBin() {
        String cache = System.getenv().getOrDefault("NFTPROXY_TEST_CACHE", System.getProperty("user.home") + "/.cache/nftproxy");
        return Path.of(cache, "node-v1.36.3", "bin");
    }

    /** The README's code block that contains {@code marker}. */
    private static String block(String readme, String marker) {
        List<String> found = new ArrayList<>();
        Matcher m = BLOCK.matcher(readme);
        while (m.find()) if (m.group(1).contains(marker)) found.add(m.group(1));
        assertEquals(1, found.size(), "one code block with " + marker + " in " + README);
        return found.get(0);
    }

    @Test
    void theReadmesKubeconfigRecipeGivesKubeProxysRights() throws Exception {
        Path kubectl = nodeBin().resolve("kubectl");
        Path kcm = nodeBin().resolve("kube-controller-manager");
        KernelTests.skipIfMissing(ApiServerBinaries.unavailabilityCause(), KernelTests.causeIf(
                !Files.isExecutable(kubectl) || !Files.isExecutable(kcm), "no kubectl and kube-controller-manager in " + nodeBin()));
        String readme = Files.readString(README);
        String rbac = block(readme, "create serviceaccount nftproxy");
        String kubeconfig = block(readme, "kc=nftproxy.kubeconfig");

        try (ApiServerProcess api = ApiServerProcess.start(ApiServerBinaries.locateOrBuild(), ApiServerProcess.Options.defaults())) {
            Map<String, String> env = Map.of("PATH", kubectl.getParent() + ":/usr/bin:/bin", "HOME", tmp.toString(),
                    "KUBECONFIG", tmp.resolve("admin.conf").toString());
            // The admin's kubeconfig with the CA inside, as kubeadm writes admin.conf.
            ReleaseTarball.Run flat = ReleaseTarball.run(List.of(kubectl.toString(), "config", "view", "--flatten",
                    "--kubeconfig", api.adminKubeconfig().toString()), Map.of(), tmp, 60);
            assertEquals(0, flat.exit(), flat.toString());
            Files.writeString(tmp.resolve("admin.conf"), flat.stdout());

            Process controllers = new ProcessBuilder(kcm.toString(), "--kubeconfig=" + api.adminKubeconfig(),
                    "--controllers=serviceaccount-token", "--service-account-private-key-file=" + api.serviceAccountKey(),
                    "--root-ca-file=" + api.caCertificate(), "--secure-port=0", "--leader-elect=false")
                    .redirectErrorStream(true).redirectOutput(tmp.resolve("kcm.log").toFile()).start();
            try {
                ReleaseTarball.Run first = ReleaseTarball.run(List.of("/bin/bash", "-euo", "pipefail", "-c", rbac), env, tmp, 120);
                assertEquals(0, first.exit(), first.toString());
                ReleaseTarball.Run second = ReleaseTarball.run(List.of("/bin/bash", "-euo", "pipefail", "-c", kubeconfig), env, tmp, 180);
                assertEquals(0, second.exit(), second + "\n" + log(tmp.resolve("kcm.log")));
                assertTrue(second.stdout().strip().endsWith("yes"), "the README's own check: " + second);
            } finally {
                controllers.destroy();
                if (!controllers.waitFor(20, TimeUnit.SECONDS)) controllers.destroyForcibly().waitFor();
            }

            Path written = tmp.resolve("nftproxy.kubeconfig");
            assertTrue(Files.readString(written).contains("certificate-authority-data:"), "the CA is embedded");
            // Only the rights kube-proxy has, over TLS with the embedded CA and the token.
            for (String[] check : List.of(new String[] {"yes", "list", "services", "--all-namespaces"},
                    new String[] {"yes", "watch", "endpointslices.discovery.k8s.io", "--all-namespaces"},
                    new String[] {"yes", "get", "nodes"}, new String[] {"yes", "create", "events"},
                    new String[] {"no", "get", "secrets", "-n", "kube-system"}, new String[] {"no", "create", "services"},
                    new String[] {"no", "delete", "nodes"})) {
                List<String> argv = new ArrayList<>(List.of(kubectl.toString(), "--kubeconfig", written.toString(), "auth", "can-i"));
                argv.addAll(List.of(check).subList(1, check.length));
                ReleaseTarball.Run r = ReleaseTarball.run(argv, Map.of("HOME", tmp.toString()), tmp, 60);
                assertEquals(check[0], r.stdout().strip(), String.join(" ", argv) + ": " + r);
            }
            ReleaseTarball.Run list = ReleaseTarball.run(List.of(kubectl.toString(), "--kubeconfig", written.toString(),
                    "get", "endpointslices", "--all-namespaces"), Map.of("HOME", tmp.toString()), tmp, 60);
            assertEquals(0, list.exit(), list.toString());
        }
    }

    private static String log(Path p) throws IOException {
        List<String> lines = Files.readAllLines(p);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    }
}
