package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.netlink.KernelTests;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.stream.Stream;

/**
 * A real API server with its admin client, set up the way the test classes that share one per class want it: a
 * namespace, a Node, Services in bulk. Closing it closes the client, then the API server and its etcd.
 */
final class ApiCluster implements AutoCloseable {
    private final ApiServerProcess api;
    private final KubernetesClient admin;

    private ApiCluster(ApiServerProcess api, KubernetesClient admin) {
        this.api = api;
        this.admin = admin;
    }

    /**
     * Skips the calling test class, saying {@code SKIPPED <testClass>: <cause>} on standard output, if any of
     * {@code causes} is present; the first present one (in the order given) is the one named.
     */
    @SafeVarargs
    static void assumeAvailable(String testClass, Optional<String>... causes) {
        KernelTests.skipIf(testClass, Stream.of(causes).flatMap(Optional::stream).findFirst());
    }

    /** etcd and kube-apiserver started with {@code options}, and a client with the admin's credentials. */
    static ApiCluster start(ApiServerProcess.Options options) throws IOException {
        ApiServerProcess api = ApiServerProcess.start(ApiServerBinaries.locateOrBuild(), options);
        try {
            return new ApiCluster(api, RealApiServerTest.client(api.adminKubeconfig()));
        } catch (RuntimeException e) {
            api.close();
            throw e;
        }
    }

    ApiServerProcess api() { return api; }

    KubernetesClient admin() { return admin; }

    ApiCluster namespace(String name) {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
        return this;
    }

    ApiCluster node(String name) {
        return node(name, Map.of());
    }

    ApiCluster node(String name, Map<String, String> labels) {
        NodeBuilder node = new NodeBuilder().withNewMetadata().withName(name).endMetadata();
        if (!labels.isEmpty()) node.editMetadata().addToLabels(labels).endMetadata();
        admin.nodes().resource(node.build()).create();
        return this;
    }

    /** Reports {@code address} as the node's InternalIP, as a kubelet would; kube-proxy waits for one before its first sync. */
    ApiCluster internalIp(String node, String address) {
        admin.nodes().withName(node).editStatus(n -> new NodeBuilder(n).editOrNewStatus().addNewAddress()
                .withType("InternalIP").withAddress(address).endAddress().endStatus().build());
        return this;
    }

    /** {@link StoredServices#create}: {@code count} Services written into etcd; the milliseconds it took. */
    long storeServices(String ns, int count, IntFunction<List<String>> endpoints) throws Exception {
        return StoredServices.create(api, admin, ns, count, endpoints);
    }

    /** {@link ApiServices#create}: {@code count} Services created through the API; the milliseconds it took. */
    long createServices(String ns, int count, IntFunction<List<String>> endpoints) throws Exception {
        return ApiServices.create(admin, ns, count, endpoints);
    }

    @Override
    public void close() throws IOException {
        try {
            admin.close();
        } finally {
            api.close();
        }
    }
}
