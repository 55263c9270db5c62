package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.it.release.ReleaseImage;
import io.nftproxy.it.release.ReleaseManifest;
import io.nftproxy.it.release.ReleaseTarball;
import io.nftproxy.it.release.TestContainerd;
import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The release image's daemon in a throwaway node namespace against a real kube-apiserver with kube-proxy's RBAC
 * identity (bound to system:node-proxier), reached through an {@link ApiRelay} on the namespace's loopback (no link
 * between namespaces): 1,000 Services reach the kernel. Once from the image's own files (a chroot of its layer with a
 * /proc of its own), and once as CI's DaemonSet e2e runs it without kubelet around it: the manifest's container
 * (command, args with $(NODE_NAME) expanded, privileged, its ConfigMap and service account token mounted as kubelet
 * mounts them, the node's network namespace as its host network) run by containerd and runc from the imported archive.
 */
class ReleaseImageAgainstApiServerTest {
    private static final String NODE = "node-1";
    private static final String NS = "release-image";
    private static final int SERVICES = 1000;

    @TempDir
    Path tmp;

    /** The API server with 1,000 Services of one endpoint each and the node; their ClusterIPs. */
    private static List<String> populate(KubernetesClient admin) throws Exception {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).create();
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
        admin.nodes().withName(NODE).editStatus(n -> new NodeBuilder(n).editOrNewStatus().addNewAddress()
                .withType("InternalIP").withAddress("192.0.2.10").endAddress().endStatus().build());
        long ms = ApiServices.create(admin, NS, SERVICES, n -> List.of("10.241." + (n / 250) + "." + (n % 250 + 1)));
        System.out.printf("release image against the API server: %d services created in %d ms%n", SERVICES, ms);
        List<String> ips = admin.services().inNamespace(NS).list().getItems().stream().map(s -> s.getSpec().getClusterIP()).toList();
        assertEquals(SERVICES, ips.size());
        return ips;
    }

    /** Waits until every ClusterIP is in the node's table; prints how long after {@code t0} that was. */
    private static void awaitAll(KernelNamespace node, List<String> clusterIps, Process daemon, Path log, long t0, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        List<String> missing = clusterIps;
        while (!missing.isEmpty()) {
            assertTrue(daemon.isAlive(), what + " exited: " + Files.readString(log));
            assertTrue(System.nanoTime() < deadline, missing.size() + " ClusterIPs not in the table after 180 s, e.g. "
                    + missing.get(0) + "\n" + Files.readString(log));
            Thread.sleep(500);
            String table = tableOrNothing(node);
            missing = missing.stream().filter(ip -> !ServiceIpsMap.holds(table, ip, "tcp", 80)).toList();
        }
        System.out.printf("release image against the API server (%s): all %d services in the node's table %d ms after"
                + " the start%n", what, clusterIps.size(), (System.nanoTime() - t0) / 1_000_000);
    }

    @Test
    void theImagesDaemonProgramsAThousandServicesFromTheApiServer() throws Exception {
        KernelTests.assumeAvailableAnd(KernelNamespace.unavailabilityCause("unshare", "chroot"), ApiServerBinaries.unavailabilityCause());

        Path root = ReleaseImage.open(ReleaseImage.find(), Files.createDirectory(tmp.resolve("oci"))).unpackLayer(tmp.resolve("root"));
        try (ApiServerProcess api = ApiServerProcess.start(ApiServerBinaries.locateOrBuild(), ApiServerProcess.Options.defaults());
             KubernetesClient admin = RealApiServerTest.client(api.adminKubeconfig());
             KernelNamespace node = KernelNamespace.create("relapi");
             NetnsThread inNode = NetnsThread.start(node.handle())) {
            List<String> clusterIps = populate(admin);
            node.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
            ServerSocket listener = inNode.call(() -> new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
            try (ApiRelay relay = new ApiRelay(api.url(), listener)) {
                // The kubeconfig and CA inside the image's file system.
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
                    awaitAll(node, clusterIps, daemon, log, t0, "chroot");
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

    @Test
    void theManifestsContainerRunsUnderContainerdAgainstTheApiServer() throws Exception {
        KernelTests.assumeAvailableAnd(TestContainerd.unavailabilityCause(), ApiServerBinaries.unavailabilityCause());
        Path archive = ReleaseImage.find();
        String ref = ReleaseImage.open(archive, Files.createDirectory(tmp.resolve("oci"))).index().path("manifests").get(0)
                .path("annotations").path("io.containerd.image.name").asString();

        try (ApiServerProcess api = ApiServerProcess.start(ApiServerBinaries.locateOrBuild(), ApiServerProcess.Options.defaults());
             KubernetesClient admin = RealApiServerTest.client(api.adminKubeconfig());
             KernelNamespace node = KernelNamespace.create("relds");
             NetnsThread inNode = NetnsThread.start(node.handle());
             TestContainerd containerd = TestContainerd.start(tmp.resolve("ctd"), "nftp-relds-" + ProcessHandle.current().pid())) {
            List<String> clusterIps = populate(admin);
            node.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
            ServerSocket listener = inNode.call(() -> new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
            try (ApiRelay relay = new ApiRelay(api.url(), listener)) {
                ReleaseTarball.Run imported = ReleaseTarball.run(containerd.ctr("images", "import", archive.toString()), Map.of(), tmp, 180);
                assertEquals(0, imported.exit(), imported.toString());

                // The release's manifest, filled in as an operator (and run.sh) does.
                List<JsonNode> docs = ReleaseManifest.documents(ReleaseManifest.fill(ReleaseManifest.read(),
                        Map.of("IMAGE", ref, "API_SERVER", relay.url().toString(), "CLUSTER_CIDR", "10.240.0.0/16")));
                JsonNode configMap = ReleaseManifest.ofKind(docs, "ConfigMap");
                JsonNode pod = ReleaseManifest.ofKind(docs, "DaemonSet").path("spec").path("template").path("spec");
                JsonNode container = pod.path("containers").get(0);
                assertEquals(ref, container.path("image").asString());
                assertTrue(pod.path("hostNetwork").asBoolean() && container.path("securityContext").path("privileged").asBoolean());

                // What kubelet mounts: the ConfigMap's keys as files, the service account's token and CA, the host paths.
                Path cm = Files.createDirectories(tmp.resolve("configmap"));
                configMap.path("data").properties().forEach(e -> write(cm.resolve(e.getKey()), e.getValue().asString()));
                Path sa = Files.createDirectories(tmp.resolve("serviceaccount"));
                Files.copy(api.caCertificate(), sa.resolve("ca.crt"));
                Files.writeString(sa.resolve("token"), Files.readString(api.proxyKubeconfig()).lines()
                        .filter(l -> l.strip().startsWith("token: ")).findFirst().orElseThrow().strip().substring("token: ".length()));
                Path lock = Files.writeString(tmp.resolve("xtables.lock"), "");   // not the host's /run/xtables.lock
                List<String> run = new ArrayList<>(containerd.ctr("run", "--rm", "--privileged",
                        "--with-ns", "network:/run/netns/" + node.name(), "--env", "NODE_NAME=" + NODE));
                for (JsonNode m : container.path("volumeMounts")) {
                    String name = m.path("name").asString();
                    String src = switch (name) {
                        case "kube-proxy" -> cm.toString();
                        case "xtables-lock" -> lock.toString();
                        // containerd's CRI makes a missing host directory; here an empty one of the test's
                        // stands in (this machine may have no /lib/modules), so nothing is made on the host.
                        default -> Files.isDirectory(Path.of(volumeHostPath(pod, name))) ? volumeHostPath(pod, name)
                                : Files.createDirectories(tmp.resolve("hostpath-" + name)).toString();
                    };
                    run.addAll(List.of("--mount", "type=bind,src=" + src + ",dst=" + m.path("mountPath").asString()
                            + ",options=rbind:" + (m.path("readOnly").asBoolean(false) ? "ro" : "rw")));
                }
                run.addAll(List.of("--mount", "type=bind,src=" + sa + ",dst=/var/run/secrets/kubernetes.io/serviceaccount,options=rbind:ro"));
                run.addAll(List.of(ref, "nftp-ds"));
                container.path("command").forEach(c -> run.add(c.asString()));
                container.path("args").forEach(a -> run.add(a.asString().replace("$(NODE_NAME)", NODE)));

                Path log = tmp.resolve("container.log");
                long t0 = System.nanoTime();
                Process daemon = new ProcessBuilder(run).redirectErrorStream(true).redirectOutput(log.toFile()).start();
                try {
                    awaitAll(node, clusterIps, daemon, log, t0, "containerd, the manifest's container");
                } finally {
                    ReleaseTarball.run(containerd.ctr("task", "kill", "-s", "SIGTERM", "nftp-ds"), Map.of(), tmp, 30);
                    if (!daemon.waitFor(30, TimeUnit.SECONDS)) {
                        ReleaseTarball.run(containerd.ctr("task", "kill", "-s", "SIGKILL", "nftp-ds"), Map.of(), tmp, 30);
                        daemon.destroyForcibly().waitFor();
                    }
                }
                String out = Files.readString(log);
                assertTrue(out.contains("libnftables loaded in-process"), out);
                assertFalse(out.contains("level=ERROR"), out);
            }
        }
    }

    private static String volumeHostPath(JsonNode pod, String name) {
        for (JsonNode v : pod.path("volumes")) {
            if (name.equals(v.path("name").asString()) && v.has("hostPath")) return v.path("hostPath").path("path").asString();
        }
        throw new AssertionError("no hostPath volume " + name);
    }

    private static void write(Path p, String content) {
        try {
            Files.writeString(p, content);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
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
