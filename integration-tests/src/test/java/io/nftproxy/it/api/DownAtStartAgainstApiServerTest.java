package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.it.daemon.DaemonProcess;
import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;
import io.nftproxy.readback.KernelTableParser;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 23's target, against a real kube-apiserver holding 1,000 Services of two endpoints each: {@code nftproxy
 * run} (a child JVM in a throwaway namespace) started while its API server's address refuses every connection
 * (nothing listens on the port its kubeconfig names), kept so for {@link #OUTAGE}, then given the server back (a
 * relay starts listening on that port). All along the process runs, /livez says 200, /healthz 503 naming the cause,
 * the log has one WARN for the outage and the kernel holds no table; within 5 s of the port coming back the kernel's
 * table is complete: every Service's dispatch, traced through the table read back from the kernel, is what the API
 * server's Services and EndpointSlices say, for every Service the cluster has (not a sample).
 */
class DownAtStartAgainstApiServerTest {
    private static final String NODE = "node-1";
    private static final String NS = "nftp-down";
    private static final int SERVICES = 1_000;
    private static final int HEALTHZ = 10256;
    /** The 40 s; -Dit.apiDownSeconds=N for a shorter run by hand. */
    private static final Duration OUTAGE = Duration.ofSeconds(Long.getLong("it.apiDownSeconds", 40));
    private static final Duration COMPLETE_WITHIN = Duration.ofSeconds(5);

    private static ApiCluster cluster;
    private static ApiServerProcess api;
    private static KubernetesClient admin;

    @BeforeAll
    static void startApiServerWithAThousandServices() throws Exception {
        ApiCluster.assumeAvailable("DownAtStartAgainstApiServerTest", KernelNamespace.unavailabilityCause(),
                ApiServerBinaries.unavailabilityCause());
        cluster = ApiCluster.start(ApiServerProcess.Options.defaults());
        api = cluster.api();
        admin = cluster.admin();
        cluster.namespace(NS).node(NODE);
        long ms = cluster.storeServices(NS, SERVICES, k -> List.of("10.252." + (k / 100) + "." + (k % 100 * 2 + 1),
                "10.252." + (k / 100) + "." + (k % 100 * 2 + 2)));
        System.out.printf("stored %d services x 2 endpoints in %d ms%n", SERVICES, ms);
    }

    @AfterAll
    static void stopApiServer() throws IOException {
        if (cluster != null) cluster.close();
    }

    @Test
    void startedWhileTheApiServerIsRefusedItRunsOnAndIsCompleteWithinFiveSecondsOfItsReturn() throws Exception {
        Map<String, Set<String>> expected = dispatchTheApiServerImplies();
        assertTrue(expected.size() >= SERVICES, "the API server's Services with endpoints: " + expected.size());
        try (KernelNamespace node = KernelNamespace.create("apidown"); NetnsThread inNode = NetnsThread.start(node.handle())) {
            node.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
            int port = inNode.call(ApiUnusableAtStartTest::freeLoopbackPort);
            String url = "https://127.0.0.1:" + port;
            Path kubeconfig = Files.createTempFile("nftp-down-", ".kubeconfig");
            Files.writeString(kubeconfig, Files.readString(api.proxyKubeconfig()).replace(api.url().toString(), url));
            try (DaemonProcess d = DaemonProcess.start(node, java -> java, Map.of(), "--kubeconfig", kubeconfig.toString(),
                    "--hostname-override", NODE, "--cluster-cidr", "10.240.0.0/16", "--healthz-bind-address", "127.0.0.1:" + HEALTHZ,
                    "--metrics-bind-address", "127.0.0.1:0", "--conntrack-max-per-core=0")) {
                long t0 = System.nanoTime();
                String warn = "API server unusable url=" + url + " ";
                assertTrue(d.awaitLog(warn, Duration.ofSeconds(60)), "no WARN naming " + url + ":\n" + d.log());
                int probes = 0;
                while (System.nanoTime() - t0 < OUTAGE.toNanos()) {
                    assertTrue(d.alive(), "the daemon exited during the outage:\n" + d.log());
                    assertEquals(200, NamespaceHttp.get(inNode, HEALTHZ, "/livez").status());
                    NamespaceHttp.Answer healthz = NamespaceHttp.get(inNode, HEALTHZ, "/healthz");
                    assertEquals(503, healthz.status(), healthz.body());
                    assertTrue(healthz.body().contains("\"cause\": \"API server " + url + " unusable: connection refused"), healthz.body());
                    assertFalse(node.nftOut("list", "tables").contains("kube-proxy"), "nothing programmed during the outage");
                    probes++;
                    Thread.sleep(2_000);
                }
                long downMs = (System.nanoTime() - t0) / 1_000_000;
                String log = d.log();
                assertEquals(1, log.lines().filter(l -> l.contains(warn)).count(), "one WARN for the whole outage:\n" + log);
                assertFalse(log.contains("first sync done"), log);

                // The API server comes back: its port listens again, relayed to the real server.
                ServerSocket listener = inNode.call(() -> new ServerSocket(port, 200, InetAddress.getLoopbackAddress()));
                try (ApiRelay relay = new ApiRelay(api.url(), listener)) {
                    long r0 = System.nanoTime();
                    long completeMs = -1;
                    while (System.nanoTime() - r0 < Duration.ofSeconds(60).toNanos() && d.alive()) {
                        // Logged once the first sync's last part is committed: the table is whole from then on.
                        if (d.log().contains("first sync done services=")) {
                            completeMs = (System.nanoTime() - r0) / 1_000_000;
                            break;
                        }
                        Thread.sleep(20);
                    }
                    assertTrue(d.alive(), "the daemon exited:\n" + d.log());
                    assertTrue(completeMs >= 0, "no first sync within 60 s of the API server's return:\n" + d.log());
                    Map<String, Set<String>> kernel = dispatchTheKernelHolds(node);
                    long checkedMs = (System.nanoTime() - r0) / 1_000_000;
                    System.out.printf("API server refused for %d ms from the daemon's start (%d probes: /livez 200, /healthz 503, no table); "
                                    + "table complete %d ms after the port listened again (%d Service addresses compared, read back by %d ms)%n",
                            downMs, probes, completeMs, kernel.size(), checkedMs);
                    // Where the time went: the daemon's own lines from the return on.
                    d.log().lines().filter(l -> l.contains("usable again") || l.contains("msg=\"listed kind=")
                            || l.contains("first sync") || l.contains("msg=\"sync ")).forEach(l -> System.out.println("  " + l));
                    assertEquals(expected, kernel, "every Service's dispatch in the kernel is what the API server implies");
                    assertTrue(completeMs <= COMPLETE_WITHIN.toMillis(), "table complete " + completeMs + " ms after the return");
                    assertEquals(200, NamespaceHttp.get(inNode, HEALTHZ, "/healthz").status());
                    assertTrue(d.log().contains("API server usable again url=" + url), d.log());
                }
            } finally {
                Files.deleteIfExists(kubeconfig);
            }
        }
    }

    /**
     * Every ClusterIP:port (TCP) of every Service in the cluster that has ready endpoints, and the {@code ip/port}
     * targets its EndpointSlices give it: worked out from the API objects here, not by the daemon's renderer.
     */
    private static Map<String, Set<String>> dispatchTheApiServerImplies() {
        Map<String, List<EndpointSlice>> slices = new HashMap<>();
        for (EndpointSlice s : admin.discovery().v1().endpointSlices().inAnyNamespace().list().getItems()) {
            String svc = s.getMetadata().getLabels() == null ? null : s.getMetadata().getLabels().get("kubernetes.io/service-name");
            if (svc != null && "IPv4".equals(s.getAddressType())) {
                slices.computeIfAbsent(s.getMetadata().getNamespace() + "/" + svc, k -> new java.util.ArrayList<>()).add(s);
            }
        }
        Map<String, Set<String>> out = new TreeMap<>();
        for (Service svc : admin.services().inAnyNamespace().list().getItems()) {
            String ip = svc.getSpec().getClusterIP();
            if (ip == null || ip.equals("None") || ip.contains(":")) continue;
            for (ServicePort p : svc.getSpec().getPorts()) {
                if (!"TCP".equals(p.getProtocol())) continue;
                Set<String> targets = new TreeSet<>();
                for (EndpointSlice s : slices.getOrDefault(svc.getMetadata().getNamespace() + "/" + svc.getMetadata().getName(), List.of())) {
                    Integer targetPort = s.getPorts() == null ? null : s.getPorts().stream()
                            .filter(ep -> Objects.equals(blankToNull(ep.getName()), blankToNull(p.getName())))
                            .map(EndpointPort::getPort).filter(Objects::nonNull).findFirst().orElse(null);
                    if (targetPort == null) continue;
                    for (Endpoint e : s.getEndpoints()) {
                        if (e.getConditions() != null && Boolean.FALSE.equals(e.getConditions().getReady())) continue;
                        for (String a : e.getAddresses()) targets.add(a + "/" + targetPort);
                    }
                }
                if (!targets.isEmpty()) out.put(ip + ":" + p.getPort(), targets);
            }
        }
        return out;
    }

    /** The same, traced through the table read back from the kernel; addresses it does not DNAT are left out. */
    private static Map<String, Set<String>> dispatchTheKernelHolds(KernelNamespace node) throws Exception {
        Map<String, Set<String>> out = new TreeMap<>();
        KernelDispatch.all(KernelTableParser.parse(node.listTable(IpFamily.IPV4))).forEach((k, targets) -> {
            if (!targets.isEmpty()) out.put(k, targets);
        });
        return out;
    }

    private static String blankToNull(String s) { return s == null || s.isEmpty() ? null : s; }
}
