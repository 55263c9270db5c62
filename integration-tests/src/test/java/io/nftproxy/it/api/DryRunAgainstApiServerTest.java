package io.nftproxy.it.api;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.cli.ExitCodes;
import io.nftproxy.it.CliRun;
import io.nftproxy.netlink.KernelNamespace;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code run --dry-run} with a kubeconfig, against a real kube-apiserver holding 1,000 Services, read with
 * kube-proxy's RBAC identity: it says the API server answered; with a kubeconfig whose server is down it says which
 * URL failed and why and exits 10, and still reports every other check. Either way the namespace's ruleset and
 * conntrack sysctls are what they were.
 */
class DryRunAgainstApiServerTest {
    private static final String NS = "dry-run";
    private static ApiCluster cluster;
    private static ApiServerProcess api;
    private static KubernetesClient admin;

    @TempDir Path dir;

    @BeforeAll
    static void startApiServerWithAThousandServices() throws Exception {
        ApiCluster.assumeAvailable("DryRunAgainstApiServerTest", ApiServerBinaries.unavailabilityCause(),
                KernelNamespace.unavailabilityCause());
        cluster = ApiCluster.start(ApiServerProcess.Options.defaults());
        api = cluster.api();
        admin = cluster.admin();
        long ms = cluster.namespace(NS).createServices(NS, 1_000, i -> List.of("10.251." + (i / 250) + "." + (i % 250 + 1)));
        System.out.printf("dry run: 1000 services created in %d ms%n", ms);
    }

    @AfterAll
    static void stopApiServer() throws Exception {
        if (cluster != null) cluster.close();
    }

    @Test
    void itAsksTheApiServerAndChangesNothing() throws Exception {
        try (KernelNamespace ns = KernelNamespace.create("dryapi")) {
            String rules = ns.nftOut("list", "ruleset"), sysctls = sysctls(ns);
            CliRun ok = dryRun(ns, api.proxyKubeconfig());
            assertEquals(ExitCodes.OK, ok.exit(), ok.out() + ok.err());
            assertTrue(ok.out().contains("source     ok: API server " + api.url().toString() + " answered (kubeconfig " + api.proxyKubeconfig() + ")"),
                    ok.out());
            assertTrue(ok.out().contains("sysctl     would set nf_conntrack_tcp_timeout_established=86400"), ok.out());
            assertTrue(ok.out().contains("result     ok; nothing was changed"), ok.out());

            int closed;
            try (ServerSocket s = new ServerSocket(0)) {
                closed = s.getLocalPort();
            }
            String deadUrl = "https://127.0.0.1:" + closed;
            Path dead = Files.writeString(dir.resolve("dead.kubeconfig"),
                    Files.readString(api.proxyKubeconfig()).replace(api.url().toString(), deadUrl));
            CliRun down = dryRun(ns, dead);
            assertEquals(ExitCodes.API_UNUSABLE, down.exit(), down.out() + down.err());
            assertTrue(down.out().contains("source     FAILED: API server " + deadUrl + " unusable: ")
                    && down.out().toLowerCase().contains("connection refused"), down.out());
            assertTrue(down.out().contains("nft        ok: ") && down.out().contains("sysctl     would set"),
                    "every other check still runs: " + down.out());
            assertTrue(down.out().contains("result     FAILED (exit 10); nothing was changed"), down.out());

            assertEquals(rules, ns.nftOut("list", "ruleset"), "the ruleset is as it was");
            assertEquals(sysctls, sysctls(ns), "the conntrack sysctls are as they were");
        }
    }

    private static CliRun dryRun(KernelNamespace ns, Path kubeconfig) {
        long t0 = System.nanoTime();
        CliRun r = CliRun.of("run", "--dry-run", "--kubeconfig", kubeconfig.toString(), "--hostname-override", "node-1",
                "--conntrack-max-per-core=0", "--netns", ns.name());
        System.out.printf("dry run against %s: exit %d in %d ms%n%s", kubeconfig.getFileName(), r.exit(),
                (System.nanoTime() - t0) / 1_000_000, r.out());
        return r;
    }

    private static String sysctls(KernelNamespace ns) throws Exception {
        return ns.execChecked("sh", "-c", "grep -H . /proc/sys/net/netfilter/nf_conntrack_* 2>/dev/null | grep -v nf_conntrack_count");
    }
}
