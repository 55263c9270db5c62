package io.nftproxy.source;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.nftproxy.cluster.ServiceObject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Informer behaviour against fabric8's mock API server in CRUD mode: initial list gate, watch events, the
 * server-side label filter. Real-server behaviour (410 relists, restarts, blackholes) is tested against a real
 * kube-apiserver in integration-tests.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesSourceTest {
    static KubernetesClient client;

    private static Service service(String name, String ip, String... label) {
        ServiceBuilder b = new ServiceBuilder().withNewMetadata().withNamespace("demo").withName(name).endMetadata()
                .withNewSpec().withClusterIP(ip).addNewPort().withName("http").withProtocol("TCP").withPort(80).endPort().endSpec();
        if (label.length == 2) b.editMetadata().addToLabels(label[0], label[1]).endMetadata();
        return b.build();
    }

    private static EndpointSlice slice(String service, String name, String ip) {
        return new EndpointSliceBuilder().withNewMetadata().withNamespace("demo").withName(name)
                .addToLabels("kubernetes.io/service-name", service).endMetadata()
                .withAddressType("IPv4").addNewPort().withName("http").withProtocol("TCP").withPort(8080).endPort()
                .addNewEndpoint().withAddresses(ip).withNewConditions().withReady(true).endConditions().withNodeName("node-a").endEndpoint()
                .build();
    }

    @Test
    void listsThenFollowsWatchEventsAndHonoursTheProxyNameFilter() {
        client.services().inNamespace("demo").resource(service("before", "172.30.0.1")).create();
        client.discovery().v1().endpointSlices().inNamespace("demo").resource(slice("before", "before-1", "10.180.0.1")).create();
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").addToLabels("topology.kubernetes.io/zone", "z1")
                .endMetadata().build()).create();

        ClusterStore store = new ClusterStore();
        try (KubernetesSource src = new KubernetesSource(client, store)) {
            src.start("node-a", Duration.ofMinutes(15));
            await().atMost(Duration.ofSeconds(30)).until(store::ready);
            assertEquals(List.of("before"), names(store));
            await().atMost(Duration.ofSeconds(30)).until(() -> store.node("node-a") != null);
            assertEquals("z1", store.node("node-a").zone());

            client.services().inNamespace("demo").resource(service("added", "172.30.0.2")).create();
            client.services().inNamespace("demo").resource(service("other-proxy", "172.30.0.3",
                    "service.kubernetes.io/service-proxy-name", "cilium")).create();
            await().atMost(Duration.ofSeconds(30)).until(() -> names(store).contains("added"));

            client.services().inNamespace("demo").withName("added").edit(s -> {
                s.getSpec().getPorts().get(0).setPort(81);
                return s;
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> store.snapshot().services().stream()
                    .anyMatch(s -> s.meta().name().equals("added") && s.ports().get(0).port() == 81));

            client.discovery().v1().endpointSlices().inNamespace("demo").withName("before-1").delete();
            await().atMost(Duration.ofSeconds(30)).until(() -> store.snapshot().endpointSlices().isEmpty());
            client.services().inNamespace("demo").withName("before").delete();
            await().atMost(Duration.ofSeconds(30)).until(() -> !names(store).contains("before"));
            assertFalse(names(store).contains("other-proxy"), "the API server filters service-proxy-name");
            assertEquals(0, src.undecodableObjects());
        }
    }

    @Test
    void storeIsNotReadyBeforeTheInitialList() {
        ClusterStore store = new ClusterStore();
        assertFalse(store.ready());
        try (KubernetesSource src = new KubernetesSource(client, store)) {
            src.start("node-a", Duration.ofMinutes(15));
            await().atMost(Duration.ofSeconds(30)).until(store::ready);
            assertTrue(store.ready());
        }
    }

    private static List<String> names(ClusterStore store) {
        return store.snapshot().services().stream().map(ServiceObject::meta).map(m -> m.name()).toList();
    }
}
