package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/** Services and their EndpointSlices created through a real API server, as many as the size tests need. */
final class ApiServices {
    private ApiServices() {}

    /** A ClusterIP Service with one TCP port named http, {@code port} → {@code targetPort}. */
    static Service clusterIP(String ns, String name, int port, int targetPort) {
        return new ServiceBuilder().withNewMetadata().withNamespace(ns).withName(name).endMetadata()
                .withNewSpec().withType("ClusterIP")
                .addNewPort().withName("http").withProtocol("TCP").withPort(port).withNewTargetPort(targetPort).endPort()
                .endSpec().build();
    }

    /**
     * Creates {@code s0} … {@code s<count-1>} in {@code ns} (http 80 → 8080), each with one slice {@code sN-1} holding
     * {@code endpoints.apply(N)}, sixteen requests at a time; returns the milliseconds it took.
     */
    static long create(KubernetesClient admin, String ns, int count, IntFunction<List<String>> endpoints) throws Exception {
        long t0 = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> creates = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int n = i;
                creates.add(pool.submit(() -> {
                    admin.services().inNamespace(ns).resource(clusterIP(ns, "s" + n, 80, 8080)).create();
                    admin.discovery().v1().endpointSlices().inNamespace(ns)
                            .resource(DaemonAgainstApiServerTest.slice(ns, "s" + n, "s" + n + "-1", 8080, endpoints.apply(n))).create();
                    return null;
                }));
            }
            for (Future<?> f : creates) f.get();
        } finally {
            pool.shutdownNow();
        }
        return (System.nanoTime() - t0) / 1_000_000;
    }
}
