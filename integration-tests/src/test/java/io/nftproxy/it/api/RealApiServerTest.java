package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.nftproxy.netlink.KernelTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Services and EndpointSlices through the fabric8 client against a real kube-apiserver: what the server adds
 * (ClusterIP allocation, validation, RBAC) is exactly what the mock server cannot show.
 */
class RealApiServerTest {
    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private static ApiServerProcess api;
    private static KubernetesClient admin;

    @BeforeAll
    static void start() throws IOException {
        KernelTests.skipIfMissing(ApiServerBinaries.unavailabilityCause());
        ApiServerBinaries binaries = ApiServerBinaries.locateOrBuild();
        long t0 = System.nanoTime();
        api = ApiServerProcess.start(binaries, ApiServerProcess.Options.defaults());
        System.out.printf("RealApiServerTest: etcd + kube-apiserver %s ready in %d ms at %s%n",
                ApiServerBinaries.K8S_VERSION, (System.nanoTime() - t0) / 1_000_000, api.url());
        admin = client(api.adminKubeconfig());
    }

    @AfterAll
    static void stop() throws IOException {
        if (admin != null) admin.close();
        if (api == null) return;
        Path kubeconfig = api.adminKubeconfig();
        int port = api.url().getPort();
        api.close();
        assertFalse(Files.exists(kubeconfig), "close() leaves the temp directory with keys and tokens behind");
        assertThrows(IOException.class, () -> new Socket(InetAddress.getLoopbackAddress(), port).close(),
                "the API server still accepts connections after close()");
    }

    static KubernetesClient client(Path kubeconfig) {
        return new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(kubeconfig.toFile())).build();
    }

    private static String freshNamespace() {
        String ns = "nftp-it-" + NAMESPACES.incrementAndGet();
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
        return ns;
    }

    static Service clusterIpService(String ns, String name) {
        return new ServiceBuilder()
                .withNewMetadata().withNamespace(ns).withName(name).endMetadata()
                .withNewSpec().withType("ClusterIP")
                .addNewPort().withName("http").withProtocol("TCP").withPort(80).withNewTargetPort(8080).endPort()
                .endSpec().build();
    }

    /** A hand-written slice on port 8080, as {@link DaemonAgainstApiServerTest#slice} writes them. */
    static EndpointSlice slice(String ns, String service, String name, List<String> addresses) {
        return DaemonAgainstApiServerTest.slice(ns, service, name, 8080, addresses);
    }

    @Test
    void servicesAndSlicesRoundTrip() {
        String ns = freshNamespace();
        Service created = admin.services().inNamespace(ns).resource(clusterIpService(ns, "web")).create();
        String clusterIp = created.getSpec().getClusterIP();
        assertTrue(clusterIp.startsWith("10.") && inServiceRange(clusterIp),
                () -> "ClusterIP " + clusterIp + " not allocated from " + ApiServerProcess.SERVICE_CLUSTER_IP_RANGE);

        admin.discovery().v1().endpointSlices().inNamespace(ns)
                .resource(slice(ns, "web", "web-abc", List.of("10.244.1.5", "10.244.2.7"))).create();
        // A second service marked for another proxy: kube-proxy's label selector must leave it out.
        admin.services().inNamespace(ns).resource(new ServiceBuilder(clusterIpService(ns, "other"))
                .editMetadata().addToLabels("service.kubernetes.io/service-proxy-name", "someone-else").endMetadata()
                .build()).create();

        List<Service> services = admin.services().inNamespace(ns)
                .withoutLabel("service.kubernetes.io/service-proxy-name")
                .withoutLabel("service.kubernetes.io/headless")
                .list().getItems();
        assertEquals(List.of("web"), services.stream().map(s -> s.getMetadata().getName()).toList());
        assertEquals(clusterIp, services.get(0).getSpec().getClusterIP());
        assertEquals(8080, services.get(0).getSpec().getPorts().get(0).getTargetPort().getIntVal());

        List<EndpointSlice> slices = admin.discovery().v1().endpointSlices().inNamespace(ns)
                .withLabel("kubernetes.io/service-name", "web").list().getItems();
        assertEquals(1, slices.size());
        assertEquals(List.of("10.244.1.5", "10.244.2.7"), addresses(slices.get(0)));
        assertEquals(8080, slices.get(0).getPorts().get(0).getPort());

        // Update: one endpoint goes unready; the server keeps the condition as written.
        EndpointSlice edited = admin.discovery().v1().endpointSlices().inNamespace(ns).withName("web-abc")
                .edit(s -> {
                    s.getEndpoints().get(1).getConditions().setReady(false);
                    return s;
                });
        assertNotEquals(slices.get(0).getMetadata().getResourceVersion(), edited.getMetadata().getResourceVersion());
        EndpointSlice reread = admin.discovery().v1().endpointSlices().inNamespace(ns).withName("web-abc").get();
        assertEquals(List.of(true, false), reread.getEndpoints().stream().map(e -> e.getConditions().getReady()).toList());

        admin.services().inNamespace(ns).withName("web").delete();
        admin.discovery().v1().endpointSlices().inNamespace(ns).withName("web-abc").delete();
        assertTrue(admin.services().inNamespace(ns).withoutLabel("service.kubernetes.io/service-proxy-name")
                .list().getItems().isEmpty());
        assertTrue(admin.discovery().v1().endpointSlices().inNamespace(ns).list().getItems().isEmpty());
    }

    @Test
    void serverRejectsWhatValidationForbids() {
        String ns = freshNamespace();
        // Loopback endpoints are refused by the real server's validation; a daemon never has to program them.
        KubernetesClientException e = assertThrows(KubernetesClientException.class, () -> admin.discovery().v1()
                .endpointSlices().inNamespace(ns).resource(slice(ns, "web", "bad", List.of("127.0.0.1"))).create());
        assertEquals(422, e.getCode(), e::getMessage);
    }

    @Test
    void proxyIdentityReadsButCannotWrite() {
        String ns = freshNamespace();
        admin.services().inNamespace(ns).resource(clusterIpService(ns, "dns")).create();
        try (KubernetesClient proxy = client(api.proxyKubeconfig())) {
            assertEquals(List.of("dns"), proxy.services().inAnyNamespace().list().getItems().stream()
                    .filter(s -> ns.equals(s.getMetadata().getNamespace()))
                    .map(s -> s.getMetadata().getName()).toList());
            proxy.discovery().v1().endpointSlices().inAnyNamespace().list();
            KubernetesClientException e = assertThrows(KubernetesClientException.class,
                    () -> proxy.services().inNamespace(ns).resource(clusterIpService(ns, "nope")).create());
            assertEquals(403, e.getCode(), e::getMessage);
        }
    }

    private static List<String> addresses(EndpointSlice s) {
        return s.getEndpoints().stream().map(Endpoint::getAddresses).flatMap(List::stream).toList();
    }

    /** 10.96.0.0/12 is 10.96.0.0 to 10.111.255.255. */
    private static boolean inServiceRange(String ip) {
        String[] o = ip.split("\\.");
        int second = Integer.parseInt(o[1]);
        return o.length == 4 && o[0].equals("10") && second >= 96 && second <= 111;
    }
}
