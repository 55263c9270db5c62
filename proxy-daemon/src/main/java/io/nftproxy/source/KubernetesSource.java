package io.nftproxy.source;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.proxy.ProxyStateBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Kubernetes as a source: shared informers for Services and EndpointSlices (minus those another proxy or the
 * headless label claims, filtered by the API server as kube-proxy's selector does), this node's Node object, and
 * ServiceCIDRs. Handlers decode and record into the {@link ClusterStore} and return: the client's few threads are
 * shared by every informer and must never wait on a sync.
 *
 * <p>Relists after a 410 Gone, reconnects and resyncs are the informers' job; an object that cannot be decoded is
 * skipped with a log line and counted, and never stops the others.
 */
public final class KubernetesSource implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KubernetesSource.class);

    private final KubernetesClient client;
    private final ClusterStore store;
    private final JsonMapper json = JsonMapper.builder().build();
    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
    private final AtomicLong undecodable = new AtomicLong();

    public KubernetesSource(KubernetesClient client, ClusterStore store) {
        this.client = client;
        this.store = store;
    }

    /**
     * Starts the informers. Services and EndpointSlices mark the store listed once their first list completes;
     * the node and ServiceCIDR informers are best effort (a cluster without ServiceCIDR v1 just has none).
     *
     * @param resync how often informers re-deliver their cache (upstream's configSyncPeriod, 15 min)
     */
    public void start(String nodeName, Duration resync) {
        long resyncMs = resync.toMillis();
        SharedIndexInformer<?> svc = client.services().inAnyNamespace()
                .withoutLabel(ProxyStateBuilder.PROXY_NAME_LABEL).withoutLabel(ProxyStateBuilder.HEADLESS_LABEL)
                .inform(handler("Service", o -> store.upsertService(ApiObjects.service(o)), store::deleteService), resyncMs);
        SharedIndexInformer<?> eps = client.discovery().v1().endpointSlices().inAnyNamespace()
                .withoutLabel(ProxyStateBuilder.PROXY_NAME_LABEL).withoutLabel(ProxyStateBuilder.HEADLESS_LABEL)
                .inform(handler("EndpointSlice", o -> store.upsertEndpointSlice(ApiObjects.endpointSlice(o)), store::deleteEndpointSlice), resyncMs);
        informers.add(svc);
        informers.add(eps);
        listed(svc, "Service", store::servicesListed);
        listed(eps, "EndpointSlice", store::endpointSlicesListed);
        try {
            informers.add(client.nodes().withField("metadata.name", nodeName)
                    .inform(handler("Node", o -> store.upsertNode(ApiObjects.node(o)), store::deleteNode), resyncMs));
        } catch (RuntimeException e) {
            LOG.warn("node informer not started node={} error={}", nodeName, e.toString());
        }
        try {
            informers.add(client.network().v1().serviceCIDRs()
                    .inform(handler("ServiceCIDR", o -> store.upsertServiceCidr(ApiObjects.serviceCidr(o)), store::deleteServiceCidr), resyncMs));
        } catch (RuntimeException e) {
            // Before Kubernetes 1.33 there is no networking.k8s.io/v1 ServiceCIDR; the drop rule is then omitted.
            LOG.info("serviceCIDR informer not started (unallocated ClusterIPs are not dropped) error={}", e.toString());
        }
    }

    private void listed(SharedIndexInformer<?> inf, String kind, Runnable mark) {
        CompletableFuture<Void> f = inf.start().toCompletableFuture();
        f.whenComplete((v, e) -> {
            if (e == null) {
                LOG.info("initial list complete kind={} objects={}", kind, inf.getStore().list().size());
                mark.run();
            }
        });
    }

    /** Objects that failed to decode so far (a metric). */
    public long undecodableObjects() { return undecodable.get(); }

    private <T extends HasMetadata> ResourceEventHandler<T> handler(String kind, Consumer<JsonNode> upsert, Consumer<ObjectMeta> delete) {
        return new ResourceEventHandler<>() {
            @Override public void onAdd(T obj) { record(obj); }
            @Override public void onUpdate(T oldObj, T newObj) { record(newObj); }
            @Override public void onDelete(T obj, boolean finalStateUnknown) {
                delete.accept(ObjectMeta.of(obj.getMetadata().getNamespace(), obj.getMetadata().getName()));
            }

            private void record(T obj) {
                try {
                    upsert.accept(json.readTree(client.getKubernetesSerialization().asJson(obj)));
                } catch (ManifestFormatException e) {
                    undecodable.incrementAndGet();
                    // The object is dropped from the store so a stale good version does not linger.
                    delete.accept(ObjectMeta.of(obj.getMetadata().getNamespace(), obj.getMetadata().getName()));
                    LOG.warn("skipped kind={} object={}/{} field={} reason={}", kind, obj.getMetadata().getNamespace(),
                            obj.getMetadata().getName(), e.field(), e.getMessage());
                } catch (RuntimeException e) {
                    undecodable.incrementAndGet();
                    LOG.warn("skipped kind={} object={}/{} reason={}", kind, obj.getMetadata().getNamespace(),
                            obj.getMetadata().getName(), e.toString());
                }
            }
        };
    }

    @Override public void close() {
        informers.forEach(SharedIndexInformer::close);
    }

}
