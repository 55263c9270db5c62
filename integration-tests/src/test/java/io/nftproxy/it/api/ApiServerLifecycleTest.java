package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fault levers later daemon tests pull: an API server restart that keeps etcd's data, and an etcd compaction
 * that makes old resource versions answer 410 Gone. The server runs without a watch cache, so lists and watches
 * at a resource version go to etcd and see the compaction at once.
 */
class ApiServerLifecycleTest {
    private static ApiCluster cluster;
    private static ApiServerProcess api;
    private static KubernetesClient admin;

    @BeforeAll
    static void start() throws IOException {
        ApiCluster.assumeAvailable("ApiServerLifecycleTest", ApiServerBinaries.unavailabilityCause());
        cluster = ApiCluster.start(ApiServerProcess.Options.defaults().withApiServerArgs("--watch-cache=false"));
        api = cluster.api();
        admin = cluster.admin();
    }

    @AfterAll
    static void stop() throws IOException {
        if (cluster != null) cluster.close();
    }

    private static String namespace(String name) {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
        return name;
    }

    @Test
    void restartKeepsStoredObjectsAndResourceVersionsMoveOn() throws IOException {
        String ns = namespace("nftp-restart");
        Service before = admin.services().inNamespace(ns).resource(RealApiServerTest.clusterIpService(ns, "kept")).create();

        long t0 = System.nanoTime();
        api.stopApiServer();
        assertFalse(api.apiServerRunning());
        // fabric8 retries refused connections with exponential backoff for ~100 s by default; one try is enough here.
        Config once = new ConfigBuilder(Config.fromKubeconfig(api.adminKubeconfig().toFile()))
                .withRequestRetryBackoffLimit(0).build();
        try (KubernetesClient noRetry = new KubernetesClientBuilder().withConfig(once).build()) {
            assertThrows(KubernetesClientException.class, () -> noRetry.services().inNamespace(ns).withName("kept").get(),
                    "a stopped API server still answered");
        }
        api.startApiServer();
        System.out.printf("ApiServerLifecycleTest: kube-apiserver restart took %d ms%n", (System.nanoTime() - t0) / 1_000_000);

        Service after = admin.services().inNamespace(ns).withName("kept").get();
        assertEquals(before.getMetadata().getUid(), after.getMetadata().getUid());
        assertEquals(before.getSpec().getClusterIP(), after.getSpec().getClusterIP());
        Service next = admin.services().inNamespace(ns).resource(RealApiServerTest.clusterIpService(ns, "next")).create();
        assertTrue(Long.parseLong(next.getMetadata().getResourceVersion()) > Long.parseLong(before.getMetadata().getResourceVersion()));
    }

    @Test
    void compactionMakesOlderResourceVersionsGone() throws Exception {
        String ns = namespace("nftp-compact");
        admin.services().inNamespace(ns).resource(RealApiServerTest.clusterIpService(ns, "a")).create();
        String oldRv = admin.services().inNamespace(ns).list().getMetadata().getResourceVersion();
        admin.services().inNamespace(ns).resource(RealApiServerTest.clusterIpService(ns, "b")).create();
        ListOptions atOldRv = new ListOptionsBuilder().withResourceVersion(oldRv).withResourceVersionMatch("Exact").build();

        // Control: before compaction the old revision is still readable, so a 410 below is the compaction's doing.
        assertEquals(1, admin.services().inNamespace(ns).list(atOldRv).getItems().size());

        long compactedAt = api.compactEtcd();
        assertTrue(compactedAt > Long.parseLong(oldRv), () -> "compacted at " + compactedAt + ", not past " + oldRv);

        KubernetesClientException listGone = assertThrows(KubernetesClientException.class,
                () -> admin.services().inNamespace(ns).list(atOldRv));
        assertEquals(410, listGone.getCode(), listGone::getMessage);

        CompletableFuture<WatcherException> closed = new CompletableFuture<>();
        try (Watch ignored = admin.services().inNamespace(ns).watch(
                new ListOptionsBuilder().withResourceVersion(oldRv).build(), new Watcher<>() {
                    @Override
                    public void eventReceived(Action action, Service resource) {
                        // events from before the compaction cannot arrive; the close below is what we wait for
                    }

                    @Override
                    public void onClose(WatcherException cause) { closed.complete(cause); }
                })) {
            WatcherException cause = closed.get(30, TimeUnit.SECONDS);
            assertTrue(cause.isHttpGone(), () -> "watch at a compacted revision closed with " + cause);
        }
    }
}
