package io.nftproxy.source;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable;
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
import java.util.concurrent.TimeUnit;
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
    /**
     * The client new watches and lists go through. A dead path leaves dead connections in the HTTP client's pool,
     * and the JDK transport has no read timeout, so a replacement informer gets a fresh client (and pool).
     */
    private volatile KubernetesClient current;
    private final List<KubernetesClient> replacements = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final ClusterStore store;
    private final JsonMapper json = JsonMapper.builder().build();
    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
    private final AtomicLong undecodable = new AtomicLong();

    /** The default lag probe: a silently dead watch is replaced within about two of these. */
    public static final Duration DEFAULT_LAG_PROBE = Duration.ofSeconds(15);

    private final Duration lagProbeInterval;
    private final List<WatchedKind<?>> watched = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final java.util.concurrent.ScheduledExecutorService prober =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "watch-lag-probe");
                t.setDaemon(true);
                return t;
            });

    public KubernetesSource(KubernetesClient client, ClusterStore store) { this(client, store, DEFAULT_LAG_PROBE); }

    /** @param lagProbeInterval how often to check that the watches still deliver (zero: never) */
    public KubernetesSource(KubernetesClient client, ClusterStore store, Duration lagProbeInterval) {
        this.client = client;
        this.current = client;
        this.store = store;
        this.lagProbeInterval = lagProbeInterval;
    }

    /**
     * One watched kind and its informer, with the probe that notices a watch which stopped delivering without
     * closing (a half-open TCP connection: the JDK transport has no read timeout or ping, and fabric8 only renews a
     * watch after minutes). The probe opens a short watch from the informer's resource version; if the API has
     * an event past it and the informer still has not seen it one probe later, the informer is replaced, and the
     * objects its fresh list no longer has are deleted from the store (their delete events were lost with the watch).
     */
    private final class WatchedKind<T extends HasMetadata> {
        final String kind;
        final java.util.function.Supplier<FilterWatchListDeletable<T, ?, ?>> resource;
        final ResourceEventHandler<T> handler;
        final java.util.function.Function<io.nftproxy.cluster.ClusterSnapshot, List<ObjectMeta>> known;
        final Consumer<ObjectMeta> delete;
        final long resyncMs;
        volatile SharedIndexInformer<T> informer;
        private long pendingRv = -1;
        private long pendingSince;

        WatchedKind(String kind, java.util.function.Supplier<FilterWatchListDeletable<T, ?, ?>> resource,
                    ResourceEventHandler<T> handler,
                    java.util.function.Function<io.nftproxy.cluster.ClusterSnapshot, List<ObjectMeta>> known,
                    Consumer<ObjectMeta> delete, long resyncMs) {
            this.kind = kind;
            this.resource = resource;
            this.handler = handler;
            this.known = known;
            this.delete = delete;
            this.resyncMs = resyncMs;
            this.informer = resource.get().inform(handler, resyncMs);
        }

        void probe() {
            try {
                long seen = rv(informer.lastSyncResourceVersion());
                if (seen < 0) return;
                if (pendingRv > 0) {
                    if (seen >= pendingRv) {
                        pendingRv = -1;
                    } else if (System.nanoTime() - pendingSince >= lagProbeInterval.toNanos()) {
                        restart(seen);
                    }
                    return;
                }
                long news = newerThan(informer.lastSyncResourceVersion());
                if (news > seen) {
                    pendingRv = news;
                    pendingSince = System.nanoTime();
                }
            } catch (RuntimeException e) {
                LOG.debug("watch probe failed kind={} error={}", kind, e.toString());
            }
        }

        /** The resource version of the first event after {@code from}, or -1 when none came within the probe time. */
        private long newerThan(String from) {
            CompletableFuture<Long> first = new CompletableFuture<>();
            CompletableFuture<io.fabric8.kubernetes.client.Watch> open = CompletableFuture.supplyAsync(() ->
                    resource.get().watch(new io.fabric8.kubernetes.api.model.ListOptionsBuilder().withResourceVersion(from)
                            .withTimeoutSeconds(5L).build(), new io.fabric8.kubernetes.client.Watcher<T>() {
                        @Override public void eventReceived(Action action, T obj) {
                            if (action == Action.ADDED || action == Action.MODIFIED || action == Action.DELETED) {
                                first.complete(rv(obj.getMetadata().getResourceVersion()));
                            }
                        }

                        @Override public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {
                            // 410 Gone: the informer's version was compacted away; a live informer relists at once.
                            first.complete(cause != null && cause.isHttpGone() ? rv(from) + 1 : -1L);
                        }
                    }));
            try {
                return first.get(3, TimeUnit.SECONDS);
            } catch (Exception e) {
                return -1;
            } finally {
                // Closed as soon as it is open; the server's 5 s watch timeout bounds one that opens late.
                open.thenAccept(io.fabric8.kubernetes.client.Watch::close);
            }
        }

        private void restart(long seen) {
            LOG.warn("watch stopped delivering kind={} resourceVersion={} api={}; replacing the informer", kind, seen, pendingRv);
            pendingRv = -1;
            SharedIndexInformer<T> old = informer;
            KubernetesClient renewed = new io.fabric8.kubernetes.client.KubernetesClientBuilder()
                    .withConfig(client.getConfiguration()).build();
            replacements.add(renewed);
            current = renewed;
            SharedIndexInformer<T> fresh = resource.get().runnableInformer(resyncMs);
            fresh.addEventHandler(handler);
            informer = fresh;
            // Closing the old informer waits on its dead connection: never on the probe thread.
            CompletableFuture.runAsync(old::close);
            fresh.start().toCompletableFuture().whenComplete((v, e) -> {
                if (e != null) {
                    LOG.debug("replacement informer did not start kind={} error={}", kind, e.toString());
                    return;
                }
                java.util.Set<String> live = new java.util.HashSet<>();
                for (T o : fresh.getStore().list()) live.add(o.getMetadata().getNamespace() + "/" + o.getMetadata().getName());
                for (ObjectMeta m : known.apply(store.snapshot())) {
                    if (!live.contains(m.namespace() + "/" + m.name())) delete.accept(m);
                }
                LOG.info("informer replaced kind={} objects={}", kind, live.size());
            });
        }
    }

    private static long rv(String s) {
        try {
            return s == null ? -1 : Long.parseLong(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Starts the informers. Services and EndpointSlices mark the store listed once their first list completes;
     * the node and ServiceCIDR informers are best effort (a cluster without ServiceCIDR v1 just has none).
     *
     * @param resync how often informers re-deliver their cache (upstream's configSyncPeriod, 15 min)
     */
    public void start(String nodeName, Duration resync) {
        long resyncMs = resync.toMillis();
        WatchedKind<Service> svc = new WatchedKind<>("Service",
                () -> current.services().inAnyNamespace()
                        .withoutLabel(ProxyStateBuilder.PROXY_NAME_LABEL).withoutLabel(ProxyStateBuilder.HEADLESS_LABEL),
                handler("Service", o -> store.upsertService(ApiObjects.service(o)), store::deleteService),
                snap -> snap.services().stream().map(x -> x.meta()).toList(), store::deleteService, resyncMs);
        WatchedKind<EndpointSlice> eps = new WatchedKind<>("EndpointSlice",
                () -> current.discovery().v1().endpointSlices().inAnyNamespace()
                        .withoutLabel(ProxyStateBuilder.PROXY_NAME_LABEL).withoutLabel(ProxyStateBuilder.HEADLESS_LABEL),
                handler("EndpointSlice", o -> store.upsertEndpointSlice(ApiObjects.endpointSlice(o)), store::deleteEndpointSlice),
                snap -> snap.endpointSlices().stream().map(x -> x.meta()).toList(), store::deleteEndpointSlice, resyncMs);
        watched.add(svc);
        watched.add(eps);
        listed(svc.informer, "Service", store::servicesListed);
        listed(eps.informer, "EndpointSlice", store::endpointSlicesListed);
        if (!lagProbeInterval.isZero()) {
            long ms = lagProbeInterval.toMillis();
            prober.scheduleWithFixedDelay(() -> watched.forEach(WatchedKind::probe), ms, ms, TimeUnit.MILLISECONDS);
        }
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
        prober.shutdownNow();
        watched.forEach(w -> w.informer.close());
        informers.forEach(SharedIndexInformer::close);
        replacements.forEach(KubernetesClient::close);
    }

}
