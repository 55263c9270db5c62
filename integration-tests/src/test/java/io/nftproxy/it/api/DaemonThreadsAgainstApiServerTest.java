package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.it.daemon.DaemonProcess;
import io.nftproxy.it.daemon.DaemonThreads;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 27 with the API source: {@code nftproxy run --kubeconfig} (the launcher's JVM flags) against a real
 * kube-apiserver holding 1,000 Services x 2 endpoints and two LoadBalancers with externalTrafficPolicy Local, in a
 * namespace of its own; after the first sync and both health-check NodePorts answering, its threads from
 * /proc/PID/task stay within the budget (the target of 12 is below the JVM's own, see {@link DaemonThreads}).
 */
class DaemonThreadsAgainstApiServerTest {
    /** The daemon's threads after its first sync from the API server: 22 as with manifests, less the manifest source's two, plus
     *  one watch thread per kind (4), the API client's callbacks and its selector, and one lag-probe thread per kind (4: a
     *  probe blocks on a short watch, so it cannot share the event loop) (37 before issue 27's changes, per the issue). */
    static final int MAX_THREADS = 30;
    private static final String NODE = "node-1";
    private static final String NODE_IP = "192.0.2.10";
    private static final String NS = "nftp-threads";
    private static final int SERVICES = 1000;

    @BeforeAll
    static void available() {
        KernelTests.assumeAvailableAnd(ApiServerBinaries.unavailabilityCause(), KernelNamespace.unavailabilityCause("curl"));
    }

    @Test
    void afterTheFirstSyncFromTheApiServerTheDaemonRunsNoMoreThreadsThanItsBudget() throws Exception {
        try (ApiServerProcess api = ApiServerProcess.start(ApiServerBinaries.locateOrBuild(), ApiServerProcess.Options.defaults());
             KubernetesClient admin = RealApiServerTest.client(api.adminKubeconfig())) {
            admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).create();
            admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
            admin.nodes().withName(NODE).editStatus(n -> new NodeBuilder(n).editOrNewStatus().addNewAddress().withType("InternalIP")
                    .withAddress(NODE_IP).endAddress().endStatus().build());
            StoredServices.create(api, admin, NS, SERVICES, k -> List.of("10.200." + (k / 250 + 1) + "." + (k % 250 + 1),
                    "10.202." + (k / 250 + 1) + "." + (k % 250 + 1)));
            List<Integer> healthPorts = new ArrayList<>();
            for (int j = 1; j <= 2; j++) healthPorts.add(localLoadBalancer(admin, j));

            try (KernelNamespace node = KernelNamespace.create("threads");
                 NetnsThread inNode = NetnsThread.start(node.handle())) {
                node.ip("link", "set", "lo", "up");
                node.ip("link", "add", "nftp0", "type", "veth", "peer", "name", "nftp1");
                node.ip("addr", "add", NODE_IP + "/24", "dev", "nftp0");
                node.ip("link", "set", "nftp0", "up");
                node.ip("link", "set", "nftp1", "up");
                ServerSocket listener = inNode.call(() -> new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
                Path kubeconfig = Files.createTempFile("nftp-threads-", ".kubeconfig");
                try (ApiRelay relay = new ApiRelay(api.url(), listener)) {
                    Files.writeString(kubeconfig, Files.readString(api.proxyKubeconfig()).replace(api.url().toString(), relay.url().toString()));
                    try (DaemonProcess d = DaemonProcess.start(node, DaemonThreads::withLauncherFlags, Map.of(),
                            "--kubeconfig", kubeconfig.toString(), "--hostname-override", NODE, "--cluster-cidr", "10.240.0.0/16",
                            "--healthz-bind-address", "127.0.0.1:10256", "--metrics-bind-address", "127.0.0.1:10249")) {
                        assertTrue(d.awaitLog("first sync done", Duration.ofSeconds(180)), d::log);
                        for (int port : healthPorts) {
                            assertEquals("200", httpCode(node, "http://" + NODE_IP + ":" + port + "/"),
                                    () -> "health check nodeport " + port + "\n" + d.log());
                        }
                        assertEquals("200", httpCode(node, "http://127.0.0.1:10256/healthz"), d::log);
                        Thread.sleep(2000);
                        Map<String, Integer> threads = DaemonThreads.byName(d.pid());
                        int total = DaemonThreads.total(threads);
                        System.out.printf("daemon threads after the first sync from the API server: %d %s%n", total, threads);
                        assertTrue(total <= MAX_THREADS, "the daemon runs " + total + " threads, more than " + MAX_THREADS + ": " + threads);
                        assertTrue(d.alive(), d::log);
                    }
                } finally {
                    Files.deleteIfExists(kubeconfig);
                }
            }
        }
    }

    /** LoadBalancer lb-J with externalTrafficPolicy Local and one endpoint on this node; its health-check NodePort. */
    private static int localLoadBalancer(KubernetesClient admin, int j) {
        Service svc = admin.services().inNamespace(NS).resource(new ServiceBuilder()
                .withNewMetadata().withNamespace(NS).withName("lb-" + j).endMetadata()
                .withNewSpec().withType("LoadBalancer").withExternalTrafficPolicy("Local")
                .addNewPort().withName("http").withProtocol("TCP").withPort(80).withNewTargetPort(8080).endPort()
                .endSpec().build()).create();
        EndpointSlice slice = new EndpointSliceBuilder()
                .withNewMetadata().withNamespace(NS).withName("lb-" + j + "-1")
                .addToLabels("kubernetes.io/service-name", "lb-" + j).endMetadata()
                .withAddressType("IPv4")
                .addNewPort().withName("http").withProtocol("TCP").withPort(8080).endPort()
                .addNewEndpoint().withAddresses("10.203.0." + j).withNodeName(NODE).withNewConditions().withReady(true).endConditions().endEndpoint()
                .build();
        admin.discovery().v1().endpointSlices().inNamespace(NS).resource(slice).create();
        return svc.getSpec().getHealthCheckNodePort();
    }

    private static String httpCode(KernelNamespace ns, String url) throws IOException {
        return ns.exec(Duration.ofSeconds(10), null, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "3", url)
                .stdout().strip();
    }
}
