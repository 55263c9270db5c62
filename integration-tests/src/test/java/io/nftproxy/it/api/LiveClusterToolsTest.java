package io.nftproxy.it.api;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.cli.ExitCodes;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.it.CliRun;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code render}, {@code trace} and {@code trace --kernel} with {@code --kubeconfig}, against a real kube-apiserver
 * holding 1,000 Services of 10 endpoints each, read with kube-proxy's RBAC identity: the trace names the endpoints the
 * API holds; the kernel trace agrees with a table loaded from the same cluster, and says DIFFERS (exit 9), naming
 * the difference, once the kernel's table or the cluster changes behind it. Times are printed.
 */
class LiveClusterToolsTest {
    private static final String NODE = "node-1";
    private static final String NS = "live-tools";
    private static final int SERVICES = 1_000;
    private static ApiCluster cluster;
    private static ApiServerProcess api;
    private static KubernetesClient admin;

    @BeforeAll
    static void startApiServerWithAThousandServices() throws Exception {
        ApiCluster.assumeAvailable("LiveClusterToolsTest", ApiServerBinaries.unavailabilityCause());
        cluster = ApiCluster.start(ApiServerProcess.Options.defaults());
        api = cluster.api();
        admin = cluster.admin();
        long ms = cluster.namespace(NS).node(NODE).internalIp(NODE, "192.0.2.10")
                .createServices(NS, SERVICES, LiveClusterToolsTest::endpoints);
        System.out.printf("live tools: %d services x 10 endpoints created in %d ms%n", SERVICES, ms);
    }

    @AfterAll
    static void stopApiServer() throws Exception {
        if (cluster != null) cluster.close();
    }

    private static List<String> endpoints(int service) {
        List<String> ips = new ArrayList<>();
        for (int e = 0; e < 10; e++) ips.add("10.251." + (service / 25) + "." + ((service % 25) * 10 + e + 1));
        return ips;
    }

    private static String clusterIp(String name) {
        return admin.services().inNamespace(NS).withName(name).get().getSpec().getClusterIP();
    }

    private static List<String> traceArgs(String service, String... more) {
        List<String> args = new ArrayList<>(List.of("trace", "--kubeconfig", api.proxyKubeconfig().toString(),
                "--hostname-override", NODE, "--cluster-cidr", "10.250.0.0/16",
                "--src", "10.250.0.9", "--dst", clusterIp(service), "--proto", "tcp", "--dport", "80"));
        args.addAll(List.of(more));
        return args;
    }

    @Test
    void traceAndRenderReadTheLiveCluster() {
        long t0 = System.nanoTime();
        CliRun trace = CliRun.of(traceArgs("s517"));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(0, trace.exit(), trace.err() + trace.out());
        assertTrue(trace.out().contains("DNAT to "), trace.out());
        List<String> expected = endpoints(517).stream().map(ip -> ip + ":8080").toList();
        for (String hp : expected) assertTrue(trace.out().contains(hp), "endpoint " + hp + " of s517 in:\n" + trace.out());
        assertFalse(trace.out().contains(endpoints(518).get(0) + ":8080"), "another Service's endpoint");
        System.out.printf("live tools: trace --kubeconfig over %d services in %d ms%n", SERVICES, ms);

        CliRun render = CliRun.of("render", "--kubeconfig", api.proxyKubeconfig().toString(),
                "--hostname-override", NODE, "--ip-family", "ipv4");
        assertEquals(0, render.exit(), render.err());
        // The default (flat) layout dispatches these simple Services through shared maps: one flat-ips element each.
        long dispatched = render.out().lines().filter(l -> l.matches("add element ip kube-proxy flat-ips-tcp-\\d+ \\{ \\S+ \\. 80 comment \"" + NS + "/s\\d+(:[a-z0-9-]+)?\" }")).count();
        assertEquals(SERVICES, dispatched, "one dispatch element per Service of the cluster");
        // The Node's address came from the API: NodePorts are accepted on it.
        assertTrue(render.out().contains("192.0.2.10"), "node IP from the Node object");
    }

    @Test
    void sourceErrorsAreOneLineAndNameTheServer(@TempDir Path tmp) throws Exception {
        CliRun both = CliRun.of("render", "--kubeconfig", api.proxyKubeconfig().toString(), "--manifests", tmp.toString(),
                "--hostname-override", NODE);
        assertEquals(2, both.exit(), both.err());
        assertTrue(both.err().contains("'--manifests' and '--kubeconfig': both given"), both.err());

        // A server nobody listens on: a refusal does not change by waiting, so the command fails at once (not after
        // the 60 s --request-timeout), saying where and why in the daemon's words.
        String kubeconfig = Files.readString(api.proxyKubeconfig()).replace(api.url().toString(), "https://127.0.0.1:1");
        Path dead = Files.writeString(tmp.resolve("dead.kubeconfig"), kubeconfig);
        long t0 = System.nanoTime();
        CliRun unreachable = CliRun.of("render", "--kubeconfig", dead.toString(), "--hostname-override", NODE);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(1, unreachable.exit(), unreachable.err());
        assertTrue(ms < 5_000, "a refused port failed the command after " + ms + " ms");
        String line = unreachable.err().lines().filter(l -> l.startsWith("nftproxy: --kubeconfig")).findFirst().orElse("");
        assertTrue(line.contains("API server https://127.0.0.1:1 unusable: connection refused"), unreachable.err());

        CliRun missing = CliRun.of("render", "--kubeconfig", tmp.resolve("absent").toString(), "--hostname-override", NODE);
        assertEquals(1, missing.exit(), missing.err());
        assertTrue(missing.err().contains("cannot be read"), missing.err());
    }

    @Test
    void kernelTraceAgreesWithTheClusterUntilOneOfThemChanges() throws Exception {
        KernelTests.assumeAvailable();
        try (KernelNamespace node = KernelNamespace.create("live")) {
            CliRun render = CliRun.of("render", "--kubeconfig", api.proxyKubeconfig().toString(),
                    "--hostname-override", NODE, "--cluster-cidr", "10.250.0.0/16", "--ip-family", "ipv4");
            assertEquals(0, render.exit(), render.err());
            node.load(render.out());

            long t0 = System.nanoTime();
            CliRun same = CliRun.of(traceArgs("s42", "--kernel", "--netns", node.name()));
            System.out.printf("live tools: trace --kernel over %d services in %d ms%n", SERVICES, (System.nanoTime() - t0) / 1_000_000);
            assertEquals(0, same.exit(), same.err() + same.out());
            assertTrue(same.out().contains("kernel: table ip kube-proxy as nft lists it now"), same.out());
            assertTrue(same.out().contains("cluster: the table the cluster implies sends it the same way"), same.out());

            // conntrack reads the same live cluster to name the flows it finds (none here: no traffic was sent).
            CliRun flows = CliRun.of("conntrack", "--kubeconfig", api.proxyKubeconfig().toString(),
                    "--hostname-override", NODE, "--service", NS + "/s42", "--netns", node.name());
            assertEquals(0, flows.exit(), flows.err());
            assertEquals("no conntrack flows belong to service " + NS + "/s42\n", flows.out());

            // Someone removes the Service's ClusterIP element from the flat dispatch set: the kernel no longer DNATs.
            // (Its service-ips element says "continue" in this layout: deleting that one alone changes no packet.)
            String ip = clusterIp("s42");
            String set = "flat-ips-tcp-" + endpoints(42).size();
            node.load("delete element ip kube-proxy " + set + " { " + ip + " . 80 }\n");
            CliRun tampered = CliRun.of(traceArgs("s42", "--kernel", "--netns", node.name()));
            assertEquals(ExitCodes.KERNEL_DIFFERS, tampered.exit(), tampered.err() + tampered.out());
            System.out.println("live tools: tampered kernel table:\n" + tampered.out().substring(tampered.out().indexOf("DIFFERS")));
            assertTrue(tampered.out().contains("DIFFERS: the cluster implies DNAT to "), tampered.out());
            assertTrue(tampered.out().lines().anyMatch(l -> l.startsWith("  ") && l.contains(set) && l.contains(ip)),
                    "the missing element is named:\n" + tampered.out());

            // The cluster moves on while the kernel keeps the old table: an endpoint the kernel still sends to is gone.
            node.load(render.out().replaceFirst("(?s)^", "delete table ip kube-proxy\n"));
            admin.discovery().v1().endpointSlices().inNamespace(NS).withName("s42-1").delete();
            admin.discovery().v1().endpointSlices().inNamespace(NS)
                    .resource(DaemonAgainstApiServerTest.slice(NS, "s42", "s42-2", 8080, endpoints(42).subList(0, 9))).create();
            CliRun stale = CliRun.of(traceArgs("s42", "--kernel", "--netns", node.name()));
            assertEquals(ExitCodes.KERNEL_DIFFERS, stale.exit(), stale.err() + stale.out());
            System.out.println("live tools: stale kernel table:\n" + stale.out().substring(stale.out().indexOf("DIFFERS")));
            String gone = endpoints(42).get(9) + ":8080";
            String differs = stale.out().lines().filter(l -> l.startsWith("DIFFERS:")).findFirst().orElse("");
            assertTrue(differs.contains("the kernel's table gives DNAT to") && differs.lastIndexOf(gone) > differs.indexOf("the kernel's"),
                    "the kernel still sends to " + gone + ":\n" + stale.out());
            assertFalse(differs.substring(0, differs.indexOf("the kernel's")).contains(gone), differs);
        }
    }
}
