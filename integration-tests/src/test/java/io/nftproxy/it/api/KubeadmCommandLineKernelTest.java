package io.nftproxy.it.api;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.it.daemon.DaemonProcess;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kubeadm's DaemonSet runs {@code kube-proxy --config=/var/lib/kube-proxy/config.conf --hostname-override=$(NODE_NAME)}.
 * With the binary swapped, exactly those two arguments and kubeadm's own config.conf (its kubeconfig path pointed at
 * this test's kubeconfig, as the DaemonSet's mounted file would be) start the daemon, which programs a throwaway
 * node namespace from a real kube-apiserver holding 1,000 Services. The daemon is a child process inside that
 * namespace (its servers bind there); it reaches the API server through a relay listening on the namespace's own
 * loopback, so nothing links the namespace to the host.
 */
class KubeadmCommandLineKernelTest {
    private static final String NODE = "node-kubeadm";
    private static final String NS = "kubeadm-line";
    private static final int SERVICES = 1000;
    private static final Path KUBEADM_CONFIG = Path.of("..", "proxy-daemon", "src", "test", "resources", "kubeadm-v1.36-kube-proxy-config.conf");
    private static ApiCluster cluster;
    private static ApiServerProcess api;
    private static KubernetesClient admin;

    @BeforeAll
    static void startApiServerWithAThousandServices() throws Exception {
        ApiCluster.assumeAvailable("KubeadmCommandLineKernelTest", KernelNamespace.unavailabilityCause(),
                ApiServerBinaries.unavailabilityCause());
        cluster = ApiCluster.start(ApiServerProcess.Options.defaults());
        api = cluster.api();
        admin = cluster.admin();
        long ms = cluster.namespace(NS).node(NODE).internalIp(NODE, "192.0.2.10")
                .storeServices(NS, SERVICES, k -> List.of("10.251." + (k / 250) + "." + (k % 250 + 1)));
        System.out.printf("KubeadmCommandLineKernelTest: %d services stored in %d ms%n", SERVICES, ms);
    }

    @AfterAll
    static void stop() throws IOException {
        if (cluster != null) cluster.close();
    }

    @Test
    void kubeadmsDaemonSetCommandLineRunsTheDaemon(@TempDir Path dir) throws Exception {
        programs(dir, false);
    }

    /**
     * kube-proxy's --master replaces the kubeconfig's server and keeps its credentials: the kubeconfig names a port
     * nobody listens on, --master the relay, and the daemon programs every Service.
     */
    @Test
    void masterOverridesTheKubeconfigsServer(@TempDir Path dir) throws Exception {
        programs(dir, true);
    }

    private void programs(Path dir, boolean viaMaster) throws Exception {
        try (KernelNamespace node = KernelNamespace.create("kubeadm");
             NetnsThread inNode = NetnsThread.start(node.handle())) {
            node.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
            ServerSocket listener = inNode.call(() -> new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
            try (ApiRelay relay = new ApiRelay(api.url(), listener)) {
                Path kubeconfig = dir.resolve("kubeconfig.conf");
                String server = viaMaster ? "https://127.0.0.1:1" : relay.url().toString();
                Files.writeString(kubeconfig, Files.readString(api.proxyKubeconfig()).replace(api.url().toString(), server));
                Path config = dir.resolve("config.conf");
                String kubeadm = Files.readString(KUBEADM_CONFIG);
                assertTrue(kubeadm.contains("kubeconfig: /var/lib/kube-proxy/kubeconfig.conf"), "kubeadm's file as kubeadm writes it");
                Files.writeString(config, kubeadm.replace("/var/lib/kube-proxy/kubeconfig.conf", kubeconfig.toString()));

                long t0 = System.nanoTime();
                List<String> args = new java.util.ArrayList<>(List.of("--config=" + config, "--hostname-override=" + NODE));
                if (viaMaster) args.add("--master=" + relay.url());
                try (DaemonProcess d = DaemonProcess.startWithoutCommand(node, args.toArray(String[]::new))) {
                    int seen = 0;
                    long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
                    while (System.nanoTime() < deadline && d.alive() && (seen = ServiceIpsMap.count(node)) < SERVICES) Thread.sleep(200);
                    int services = seen;
                    System.out.printf("kubeadm's command line%s: %d services in the node's table after %d ms%n", viaMaster ? " and --master" : "", services,
                            (System.nanoTime() - t0) / 1_000_000);
                    assertTrue(d.alive(), () -> "the daemon stopped:\n" + d.log());
                    assertTrue(services >= SERVICES, () -> services + " of " + SERVICES + " services programmed:\n" + d.log());
                    assertTrue(d.awaitLog("first sync done", Duration.ofSeconds(30)), d::log);
                    assertTrue(d.log().contains("node=" + NODE), d::log);
                    if (viaMaster) assertTrue(d.log().contains("--master: " + relay.url() + " is the API server"), d::log);
                }
            }
        }
    }
}
