package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.networking.v1.IPAddress;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.nftproxy.netlink.KernelTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Services stored in etcd are, to the API server and its ClusterIP allocator, the Services it would have created. */
class StoredServicesTest {
    private static final int COUNT = 100;
    private static ApiCluster cluster;
    private static ApiServerProcess api;
    private static KubernetesClient admin;

    @BeforeAll
    static void start() throws IOException {
        KernelTests.skipIfMissing(ApiServerBinaries.unavailabilityCause());
        cluster = ApiCluster.start(ApiServerProcess.Options.defaults());
        api = cluster.api();
        admin = cluster.admin();
    }

    @AfterAll
    static void stop() throws IOException {
        if (cluster != null) cluster.close();
    }

    private static String ns(String name) {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
        return name;
    }

    @Test
    void storedServicesAreServedOwnTheirClusterIPsAndAreNeverStoredTwice() throws Exception {
        String ns = ns("stored");
        StoredServices.create(api, admin, ns, COUNT, k -> List.of("10.200.1." + (k + 1), "10.200.2." + (k + 1)));

        Set<String> uids = new HashSet<>();
        for (Service s : admin.services().inNamespace(ns).list().getItems()) {
            int k = Integer.parseInt(s.getMetadata().getName().substring(1));
            assertEquals(StoredServices.clusterIP(k), s.getSpec().getClusterIP(), s.getMetadata().getName());
            assertEquals(List.of(StoredServices.clusterIP(k)), s.getSpec().getClusterIPs());
            assertEquals(List.of("IPv4"), s.getSpec().getIpFamilies());
            assertEquals(8080, s.getSpec().getPorts().get(0).getTargetPort().getIntVal());
            assertTrue(uids.add(s.getMetadata().getUid()), "uid of " + s.getMetadata().getName() + " repeated");
            IPAddress ip = admin.network().v1().ipAddresses().withName(s.getSpec().getClusterIP()).get();
            assertNotNull(ip, "no IPAddress for " + s.getMetadata().getName());
            assertEquals(s.getMetadata().getName(), ip.getSpec().getParentRef().getName());
        }
        assertEquals(COUNT, uids.size());
        EndpointSlice slice = admin.discovery().v1().endpointSlices().inNamespace(ns).withName("s42-1").get();
        assertEquals("s42", slice.getMetadata().getLabels().get("kubernetes.io/service-name"));
        assertEquals(List.of("10.200.1.43", "10.200.2.43"), slice.getEndpoints().stream().map(Endpoint::getAddresses).map(a -> a.get(0)).toList());

        // The allocator knows the stored addresses: asking for one is refused, a dynamic one lands elsewhere.
        Service taken = new ServiceBuilder(ApiServices.clusterIP(ns, "taken", 80, 8080)).editSpec().withClusterIP(StoredServices.clusterIP(7)).endSpec().build();
        KubernetesClientException e = assertThrows(KubernetesClientException.class, () -> admin.services().inNamespace(ns).resource(taken).create());
        assertTrue(e.getMessage().contains("already allocated"), e.getMessage());
        String fresh = admin.services().inNamespace(ns).resource(ApiServices.clusterIP(ns, "fresh", 80, 8080)).create().getSpec().getClusterIP();
        assertTrue(admin.services().inNamespace(ns).list().getItems().stream().filter(s -> !s.getMetadata().getName().equals("fresh"))
                .noneMatch(s -> s.getSpec().getClusterIP().equals(fresh)), fresh + " given twice");

        // A stored Service is an ordinary one: deleting it frees its address.
        admin.services().inNamespace(ns).withName("s9").delete();
        long until = System.nanoTime() + 30_000_000_000L;
        while (admin.network().v1().ipAddresses().withName(StoredServices.clusterIP(9)).get() != null && System.nanoTime() < until) Thread.sleep(100);
        assertEquals(null, admin.network().v1().ipAddresses().withName(StoredServices.clusterIP(9)).get(), "IPAddress of a deleted stored Service");

        // Storing again over what is there is refused by etcd, batch by batch, and says which batch.
        admin.services().inNamespace(ns).withName("s0").delete();
        admin.discovery().v1().endpointSlices().inNamespace(ns).withName("s0-1").delete();
        until = System.nanoTime() + 30_000_000_000L;
        while (admin.network().v1().ipAddresses().withName(StoredServices.clusterIP(0)).get() != null && System.nanoTime() < until) Thread.sleep(100);
        ExecutionException again = assertThrows(ExecutionException.class, () -> StoredServices.create(api, admin, ns, COUNT, k -> List.of("10.200.3.1")));
        assertTrue(again.getCause().getMessage().contains("etcd refused the batch s1..s42"), again.getCause().getMessage());
        assertEquals("10.200.1.2", admin.discovery().v1().endpointSlices().inNamespace(ns).withName("s1-1").get().getEndpoints().get(0).getAddresses().get(0),
                "a refused batch changes nothing");
    }
}
