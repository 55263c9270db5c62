package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.it.release.ReleaseImage;
import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The release image's daemon, run from its own files (a chroot of its layer with a /proc of its own, as a container
 * has) in a throwaway node namespace, against a real kube-apiserver with kube-proxy's RBAC identity (bound to
 * system:node-proxier): its jlink'd runtime does the TLS and HTTP/2 the API server needs, and 1,000 Services reach
 * the kernel. This is what CI's DaemonSet e2e runs, without kubelet and containerd around it. The API server is
 * reached through an {@link ApiRelay} listening on the node namespace's loopback (no link between namespaces).
 */
class ReleaseImageAgainstApiServerTest {
    private static final String NODE = "node-1";
    private static final String NS = "release-image";
    private static final int SERVICES = 1000;

    @TempDir
    Path tmp;

    @Test
    void theImagesDaemonProgramsAThousandServicesFromTheApiServer() throws Exception {
        String cause = KernelNamespace.unavailabilityCause("unshare", "chroot").orElse(ApiServerBinaries.unavailabilityCause().orElse(null));
        if (cause != null) System.out.println("SKIPPED ReleaseImageAgainstApiServerTest: " + cause);
        Assumptions.assumeTrue(cause == null, cause);

        Path root = ReleaseImage.open(ReleaseImage.find(), Files.createDirectory(tmp.resolve("oci"))).unpackLayer(tmp.resolve("root"));
        try (ApiServerProcess api = ApiServerProcess.start(ApiServerBinaries.locateOrBuild(), ApiServerProcess.Options.defaults());
             KubernetesClient admin = RealApiServerTest.client(api.adminKubeconfig());
             KernelNamespace node = KernelNamespace.create("relapi");
             NetnsThread inNode = NetnsThread.start(node.name())) {
            admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).create();
            admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
            admin.nodes().withName(NODE).editStatus(n -> new NodeBuilder(n).editOrNewStatus().addNewAddress()
                    .withType("InternalIP").withAddress("192.0.2.10").endAddress().endStatus().build());
            long createdMs = ApiServices.create(admin, NS, SERVICES, n -> List.of("10.241." + (n / 250) + "." + (n % 250 + 1)));
            List<String> clusterIps = admin.services().inNamespace(NS).list().getItems().stream()
                    .map(s -> s.getSpec().getClusterIP()).toList();
            assertEquals(SERVICES, clusterIps.size());

            node.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
            ServerSocket listener = inNode.call(() -> new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
            try (ApiRelay relay = new ApiRelay(api.url(), listener)) {
                // The kubeconfig and CA inside the image's file system, as the ConfigMap and the service account's
                // token are mounted into the pod.
                Files.createDirectories(root.resolve("var/lib/kube-proxy"));
                Files.copy(api.caCertificate(), root.resolve("var/lib/kube-proxy/ca.crt"));
                Files.writeString(root.resolve("var/lib/kube-proxy/kubeconfig.conf"), Files.readString(api.proxyKubeconfig())
                        .replace(api.url().toString(), relay.url().toString())
                        .replace(api.caCertificate().toString(), "/var/lib/kube-proxy/ca.crt"));
                List<String> cmd = new ArrayList<>(List.of(KernelNamespace.executable("ip").orElseThrow(), "netns", "exec", node.name(),
                        KernelNamespace.executable("unshare").orElseThrow(), "--mount", "--pid", "--fork", "--kill-child=SIGTERM",
                        "--mount-proc=" + root.resolve("proc"), KernelNamespace.executable("chroot").orElseThrow(), root.toString()));
                cmd.addAll(ReleaseImage.ENTRYPOINT);
                cmd.addAll(List.of("run", "--kubeconfig=/var/lib/kube-proxy/kubeconfig.conf", "--hostname-override=" + NODE,
                        "--cluster-cidr=10.240.0.0/16"));
                Path log = tmp.resolve("daemon.log");
                long t0 = System.nanoTime();
                Process daemon = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
                try {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
                    List<String> missing = clusterIps;
                    while (!missing.isEmpty()) {
                        assertTrue(daemon.isAlive(), "the daemon exited: " + Files.readString(log));
                        assertTrue(System.nanoTime() < deadline, missing.size() + " ClusterIPs not in the table after 180 s, e.g. "
                                + missing.get(0) + "\n" + Files.readString(log));
                        Thread.sleep(500);
                        String table = tableOrNothing(node);
                        missing = missing.stream().filter(ip -> !table.contains(ip + " . tcp . 80 :")).toList();
                    }
                    System.out.printf("release image against the API server: %d services created in %d ms, all in the"
                            + " node's table %d ms after the daemon started%n", SERVICES, createdMs, (System.nanoTime() - t0) / 1_000_000);
                } finally {
                    daemon.destroy();   // SIGTERM to unshare, which sends SIGTERM to the daemon as it exits
                    if (!daemon.waitFor(30, TimeUnit.SECONDS)) daemon.destroyForcibly().waitFor();
                }
                String out = Files.readString(log);
                assertTrue(out.contains("libnftables loaded in-process"), out);
                assertFalse(out.contains("level=ERROR"), out);
            }
        }
    }

    /** The node's table, or nothing before the daemon's first sync made it. */
    private static String tableOrNothing(KernelNamespace node) {
        try {
            return node.listTableText(IpFamily.IPV4);
        } catch (java.io.IOException e) {
            return "";
        }
    }
}
