package io.nftproxy.source;

import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.http.HttpServer;
import io.nftproxy.service.ProxyStateBuilder;
import io.nftproxy.source.api.ApiReachability;
import io.nftproxy.source.api.ApiServer;
import io.nftproxy.source.api.ListWatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Kubernetes as a source: a {@link ListWatch} each for Services and EndpointSlices (minus those another proxy or
 * the headless label claims and headless Services, filtered by the API server with kube-proxy's selectors), this
 * node's Node object and ServiceCIDRs. Objects are decoded from the response stream with the same decoder that
 * reads manifest files and recorded into the {@link ClusterStore} on the watch's own thread; nothing here ever waits
 * on a sync.
 *
 * <p>The first sync waits for all four lists to be handed over whole (the store's {@link ClusterStore#ready gate}):
 * a sync with only part of the Services or slices would reject Services whose slices had not arrived yet, and one
 * without the Node would program a node context that the next sync changes. The Node and ServiceCIDRs are waited
 * for at most {@code nodeWait} after Services and slices are in, with a warning, as kube-proxy waits for its node.
 *
 * <p>The server unreachable, its name not resolving, refusing, answering 401/403, 429 or 5xx, or presenting a
 * certificate the kubeconfig's CA did not sign, at start as after it: every kind retries forever with capped,
 * jittered backoff, and the log says so once per change of cause, naming the URL and the root cause. Nothing is
 * removed from the store meanwhile, so the kernel table stays as it is.
 */
public final class KubernetesSource implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KubernetesSource.class);

    /** The default lag probe: a silently dead watch is replaced within about two of these. */
    public static final Duration DEFAULT_LAG_PROBE = Duration.ofSeconds(15);
    /** How long the first sync waits for the Node and ServiceCIDRs once Services and slices are in. */
    public static final Duration DEFAULT_NODE_WAIT = Duration.ofSeconds(30);

    private final ApiServer api;
    private final ClusterStore store;
    private final Duration lagProbeInterval;
    private final Duration nodeWait;
    private final ApiReachability reachability;
    private final List<ListWatch<?>> watches = new CopyOnWriteArrayList<>();
    private final AtomicBoolean waitStarted = new AtomicBoolean();
    /**
     * One thread per watched kind for the lag probes: a probe waits out a short watch of up to 3 s, so it may not run on
     * the HTTP servers' event loop, and one shared thread found a frozen watch a whole round late.
     */
    private final ScheduledExecutorService timer = Executors.newScheduledThreadPool(4, r -> {
        Thread t = new Thread(r, "watch-lag-probe");
        t.setDaemon(true);
        return t;
    });
    /** The Node wait: on the HTTP servers' event loop (it only reads the store), no thread of its own. */
    private final List<ScheduledFuture<?>> timers = new CopyOnWriteArrayList<>();

    public KubernetesSource(ApiServer api, ClusterStore store) { this(api, store, DEFAULT_LAG_PROBE, DEFAULT_NODE_WAIT); }

    /** @param lagProbeInterval how often to check that the watches still deliver (zero: never) */
    public KubernetesSource(ApiServer api, ClusterStore store, Duration lagProbeInterval, Duration nodeWait) {
        this(api, store, lagProbeInterval, nodeWait, new ApiReachability(api.url(), "the kernel table stays as it is"));
    }

    /** With {@code reachability} saying what happens while the server is unusable (a command does not keep a table). */
    public KubernetesSource(ApiServer api, ClusterStore store, Duration lagProbeInterval, Duration nodeWait, ApiReachability reachability) {
        this.api = api;
        this.store = store;
        this.lagProbeInterval = lagProbeInterval;
        this.nodeWait = nodeWait;
        this.reachability = reachability;
    }

    /** Starts watching; returns at once, whether or not the server can be reached. */
    public void start(String nodeName) {
        store.awaitNodeAndServiceCidrs();
        String notOtherProxies = ListWatch.labelSelector("!" + ProxyStateBuilder.PROXY_NAME_LABEL + ",!" + ProxyStateBuilder.HEADLESS_LABEL);
        // Headless Services program nothing: the server leaves them out, as it does for kube-proxy's informer.
        String notHeadless = ListWatch.fieldSelector("spec.clusterIP!=None");
        watch("Service", "api/v1/services", notOtherProxies + "&" + notHeadless, ApiObjectDecoder::service, list -> {
            store.replaceServices(list);
            if (!store.servicesAndSlicesListed()) store.servicesListed();
            primaryListed();
        }, store::upsertService, store::deleteService);
        watch("EndpointSlice", "apis/discovery.k8s.io/v1/endpointslices", notOtherProxies, ApiObjectDecoder::endpointSlice, list -> {
            store.replaceEndpointSlices(list);
            if (!store.servicesAndSlicesListed()) store.endpointSlicesListed();
            primaryListed();
        }, store::upsertEndpointSlice, store::deleteEndpointSlice);
        watch("Node", "api/v1/nodes", ListWatch.fieldSelector("metadata.name=" + nodeName), ApiObjectDecoder::node, list -> {
            store.replaceNodes(list);
            if (list.isEmpty()) LOG.warn("node object not found node={}; syncing without its labels and podCIDRs until it appears", nodeName);
            store.nodesListed();
        }, store::upsertNode, store::deleteNode);
        watch("ServiceCIDR", "apis/networking.k8s.io/v1/servicecidrs", "", ApiObjectDecoder::serviceCidr, list -> {
            store.replaceServiceCidrs(list);
            store.serviceCidrsListed();
        }, store::upsertServiceCidr, store::deleteServiceCidr);
        if (!lagProbeInterval.isZero()) {
            long ms = lagProbeInterval.toMillis();
            // Each kind on a schedule of its own: a probe of a kind without news waits out its 2 s watch, and with
            // the kinds probed one after another a round took up to 8 s more than the interval (a frozen watch was
            // found 9-15 s after the freeze with a 2 s interval, not the two intervals promised).
            for (ListWatch<?> w : watches) {
                timer.scheduleWithFixedDelay(() -> w.probe(lagProbeInterval), ms, ms, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** Once Services and slices are in, the Node and ServiceCIDRs get a bounded time to follow. */
    private void primaryListed() {
        if (!store.servicesAndSlicesListed() || !waitStarted.compareAndSet(false, true)) return;
        timers.add(HttpServer.eventLoop().schedule(() -> {
            List<String> waiting = store.waitingFor();
            if (waiting.isEmpty()) return;
            LOG.warn("first sync proceeds without {} after waiting {} s; they are applied when they arrive", waiting, nodeWait.toSeconds());
            if (waiting.contains("Node")) store.nodesListed();
            if (waiting.contains("ServiceCIDRs")) store.serviceCidrsListed();
        }, nodeWait.toMillis(), TimeUnit.MILLISECONDS));
    }

    /**
     * @param decode the decoder that reads manifest files too, so that both sources map fields, check types and
     *               report problems identically
     */
    private <T> void watch(String kind, String path, String selector, Function<ApiNode, T> decode, Consumer<List<T>> replace,
                           Consumer<T> upsert, Consumer<ObjectMeta> delete) {
        ListWatch<T> w = new ListWatch<>(kind, path, selector, api, reachability, new ListWatch.Sink<>(
                object -> decode.apply(new ApiNode(object, "")), replace, upsert, delete, (meta, why) -> {
                    store.undecodable(kind);
                    delete.accept(meta);
                    String field = why instanceof ManifestFormatException m ? " field=" + m.field() : "";
                    LOG.warn("skipped kind={} object={}{} reason=\"{}\"", kind, meta.key(), field,
                            why instanceof ManifestFormatException ? why.getMessage() : why.toString());
                },
                // A kind the server does not serve (ServiceCIDR before Kubernetes 1.33) must not hold the first sync back.
                () -> replace.accept(List.of())));
        watches.add(w);
        w.start();
    }

    /** Why the API server is not usable right now, by kind (empty when it is). */
    public java.util.Map<String, String> problems() { return reachability.problems(); }

    /** "API server URL unusable: CAUSE" while some kind cannot reach it, else null: what /healthz says before the first sync. */
    public String unusable() { return reachability.describe(); }

    @Override public void close() {
        timer.shutdownNow();
        timers.forEach(t -> t.cancel(false));
        watches.forEach(ListWatch::close);
    }
}
