package io.nftproxy.metrics;

import io.nftproxy.build.BuildInfo;
import io.nftproxy.http.Response;
import io.nftproxy.net.IpFamily;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmBufferPoolMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmClassLoadingMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmCompilationMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmGarbageCollectorMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmNativeMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmRuntimeInfoMetric;
import io.prometheus.metrics.instrumentation.jvm.JvmThreadsMetrics;
import io.prometheus.metrics.instrumentation.jvm.ProcessMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The metrics kube-proxy's nftables mode exports, under the same names so existing dashboards and alerts work,
 * plus nftproxy's own (prefixed {@code nftproxy_}). One registry per daemon; tests make their own.
 */
public final class ProxyMetrics {
    private static final double[] SYNC_BUCKETS = {0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256,
            0.512, 1.024, 2.048, 4.096, 8.192, 16.384};

    /**
     * kube-proxy 1.36's layout (0.25 s, 0.5 s, every second to 59 s, every 5 s to 115 s, every 30 s to 5 min), so sums
     * over a fleet with both proxies line up, plus finer bounds below 0.25 s, where nftproxy's changes land.
     */
    private static final double[] PROGRAMMING_BUCKETS = programmingBuckets();

    private final PrometheusRegistry registry;
    private final Histogram syncDuration;
    private final Clock clock;
    private final Histogram fullSyncDuration;
    private final Histogram partialSyncDuration;
    private final Gauge lastSync;
    private final Gauge lastQueued;
    private final Histogram programmingLatency;
    private final Counter syncFailures;
    private final Counter cleanupFailures;
    private final Gauge noLocalEndpoints;
    private final Counter healthz;
    private final Counter livez;
    private final Counter invalidObjects;
    private final Counter tamperRepairs;
    private final Counter transactionCommands;
    private final Counter verifications;
    private final Histogram conntrackReconcile;
    private final Counter conntrackDeleted;

    /** @param clock the wall clock the last-sync and last-queued timestamps read */
    public ProxyMetrics(PrometheusRegistry registry, boolean jvm, Clock clock) {
        this.clock = clock;
        this.registry = registry;
        // Without exemplars (there is no tracer to take them from): their sampler starts a scheduler thread of its own.
        syncDuration = Histogram.builder().name("kubeproxy_sync_proxy_rules_duration_seconds")
                .help("SyncProxyRules latency in seconds").classicUpperBounds(SYNC_BUCKETS).labelNames("ip_family").withoutExemplars().register(registry);
        fullSyncDuration = Histogram.builder().name("kubeproxy_sync_full_proxy_rules_duration_seconds")
                .help("Full sync latency in seconds").classicUpperBounds(SYNC_BUCKETS).labelNames("ip_family").withoutExemplars().register(registry);
        partialSyncDuration = Histogram.builder().name("kubeproxy_sync_partial_proxy_rules_duration_seconds")
                .help("Partial sync latency in seconds").classicUpperBounds(SYNC_BUCKETS).labelNames("ip_family").withoutExemplars().register(registry);
        lastSync = Gauge.builder().name("kubeproxy_sync_proxy_rules_last_timestamp_seconds")
                .help("The last time proxy rules were successfully synced").labelNames("ip_family").withoutExemplars().register(registry);
        lastQueued = Gauge.builder().name("kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds")
                .help("The last time a sync of proxy rules was queued").labelNames("ip_family").withoutExemplars().register(registry);
        programmingLatency = Histogram.builder().name("kubeproxy_network_programming_duration_seconds")
                .help("In-cluster network programming latency: EndpointSlice trigger time to kernel commit")
                .classicUpperBounds(PROGRAMMING_BUCKETS).labelNames("ip_family").withoutExemplars().register(registry);
        syncFailures = Counter.builder().name("kubeproxy_sync_proxy_rules_nftables_sync_failures_total")
                .help("Failed nftables transactions").labelNames("ip_family").withoutExemplars().register(registry);
        cleanupFailures = Counter.builder().name("kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total")
                .help("Failed stale-chain cleanup transactions").labelNames("ip_family").withoutExemplars().register(registry);
        noLocalEndpoints = Gauge.builder().name("kubeproxy_sync_proxy_rules_no_local_endpoints_total")
                .help("Service ports with a Local policy and no local endpoints while others exist")
                .labelNames("ip_family", "traffic_policy").withoutExemplars().register(registry);
        healthz = Counter.builder().name("kubeproxy_proxy_healthz_total").help("/healthz responses by code")
                .labelNames("code").withoutExemplars().register(registry);
        livez = Counter.builder().name("kubeproxy_proxy_livez_total").help("/livez responses by code")
                .labelNames("code").withoutExemplars().register(registry);
        invalidObjects = Counter.builder().name("nftproxy_invalid_objects_total")
                .help("API objects or parts of them skipped by validation, or kept with a warning (an externalIP that is another Service's ClusterIP)").labelNames("kind", "field").withoutExemplars().register(registry);
        tamperRepairs = Counter.builder().name("nftproxy_tamper_resyncs_total")
                .help("Full resyncs started because someone else changed our tables").labelNames("ip_family").withoutExemplars().register(registry);
        transactionCommands = Counter.builder().name("nftproxy_transaction_commands_total")
                .help("Commands sent to the kernel").labelNames("ip_family").withoutExemplars().register(registry);
        verifications = Counter.builder().name("nftproxy_table_verifications_total")
                .help("Periodic verifications of our tables: path=generation (the ruleset generation has not moved since our commit), monitor (the nftables monitor saw every commit since ours and none touched the table) or read_back (listed and compared)")
                .labelNames("ip_family", "path").withoutExemplars().register(registry);
        // kube-proxy's conntrack reconciler pair, with its buckets (1 ms doubling, 15 of them).
        double[] ctBuckets = new double[15];
        for (int i = 0; i < ctBuckets.length; i++) ctBuckets[i] = 0.001 * (1 << i);
        conntrackReconcile = Histogram.builder().name("kubeproxy_conntrack_reconciler_sync_duration_seconds")
                .help("ReconcileConntrackFlowsLatency latency in seconds").classicUpperBounds(ctBuckets)
                .labelNames("ip_family").withoutExemplars().register(registry);
        conntrackDeleted = Counter.builder().name("kubeproxy_conntrack_reconciler_deleted_entries_total")
                .help("Cumulative conntrack flows deleted by conntrack reconciler").labelNames("ip_family").withoutExemplars().register(registry);
        BuildInfo build = BuildInfo.current();
        Info.builder().name("nftproxy_build_info").help("The version, commit and build time of this nftproxy")
                .labelNames("version", "git_commit", "build_date", "java_version").register(registry)
                .addLabelValues(build.version(), build.commit(), build.date(), Runtime.version().toString());
        if (jvm) {
            // JvmMetrics' set but the per-pool allocation counters: bumped from a listener at every collection, with
            // exemplars that no configuration turns off, they started a scheduler thread of their own (issue 27).
            JvmThreadsMetrics.builder().register(registry);
            JvmBufferPoolMetrics.builder().register(registry);
            JvmClassLoadingMetrics.builder().register(registry);
            JvmCompilationMetrics.builder().register(registry);
            JvmGarbageCollectorMetrics.builder().register(registry);
            JvmMemoryMetrics.builder().register(registry);
            JvmNativeMemoryMetrics.builder().register(registry);
            JvmRuntimeInfoMetric.builder().register(registry);
            ProcessMetrics.builder().register(registry);
        }
    }

    /**
     * kube-proxy's change-tracker metrics, read from the store at each scrape: Service and EndpointSlice events seen
     * (counters) and the changes recorded but not yet taken by a sync (gauges).
     */
    public void changeTracking(LongSupplier serviceEvents, LongSupplier servicesPending, LongSupplier endpointSliceEvents,
                               LongSupplier endpointSliceChangesPending) {
        CounterWithCallback.builder().name("kubeproxy_sync_proxy_rules_service_changes_total")
                .help("Cumulative proxy rules Service changes").callback(c -> c.call(serviceEvents.getAsLong())).register(registry);
        GaugeWithCallback.builder().name("kubeproxy_sync_proxy_rules_service_changes_pending")
                .help("Pending proxy rules Service changes").callback(c -> c.call(servicesPending.getAsLong())).register(registry);
        CounterWithCallback.builder().name("kubeproxy_sync_proxy_rules_endpoint_changes_total")
                .help("Cumulative proxy rules Endpoint changes").callback(c -> c.call(endpointSliceEvents.getAsLong())).register(registry);
        GaugeWithCallback.builder().name("kubeproxy_sync_proxy_rules_endpoint_changes_pending")
                .help("Pending proxy rules Endpoint changes").callback(c -> c.call(endpointSliceChangesPending.getAsLong())).register(registry);
    }

    /** Objects a source skipped because they did not decode, by kind, read from the store at each scrape. */
    public void undecodableObjects(Supplier<Map<String, Long>> byKind) {
        CounterWithCallback.builder().name("nftproxy_undecodable_objects_total")
                .help("API objects skipped because they could not be decoded (the log names each one)").labelNames("kind")
                .callback(c -> byKind.get().forEach((kind, n) -> c.call(n, kind))).register(registry);
    }

    /**
     * One family's successful sync. {@code wholeCluster}: every Service was looked at (a rebuild or a converge,
     * whether the kernel was read back or not), which kube-proxy times in its full-sync histogram.
     */
    public void sync(IpFamily f, boolean wholeCluster, Duration took, int commands) {
        double s = took.toNanos() / 1e9;
        syncDuration.labelValues(f.apiName()).observe(s);
        (wholeCluster ? fullSyncDuration : partialSyncDuration).labelValues(f.apiName()).observe(s);
        lastSync.labelValues(f.apiName()).set(clock.millis() / 1000.0);
        transactionCommands.labelValues(f.apiName()).inc(commands);
    }

    public void queued(IpFamily f) { lastQueued.labelValues(f.apiName()).set(clock.millis() / 1000.0); }
    public void syncFailed(IpFamily f) { syncFailures.labelValues(f.apiName()).inc(); }
    public void cleanupFailed(IpFamily f) { cleanupFailures.labelValues(f.apiName()).inc(); }
    public void programmingLatency(IpFamily f, Duration d) { programmingLatency.labelValues(f.apiName()).observe(d.toNanos() / 1e9); }
    public void noLocalEndpoints(IpFamily f, int internal, int external) {
        noLocalEndpoints.labelValues(f.apiName(), "internal").set(internal);
        noLocalEndpoints.labelValues(f.apiName(), "external").set(external);
    }
    public void healthz(int code) { healthz.labelValues(Integer.toString(code)).inc(); }
    public void livez(int code) { livez.labelValues(Integer.toString(code)).inc(); }
    public void invalidObject(String kind, String field) { invalidObjects.labelValues(kind, field).inc(); }
    public void tamperResync(IpFamily f) { tamperRepairs.labelValues(f.apiName()).inc(); }
    /** One periodic verification, by how it was settled: generation, monitor or read_back. */
    public void tableVerification(IpFamily f, String path) {
        verifications.labelValues(f.apiName(), path).inc();
    }
    public void conntrackReconciled(IpFamily f, Duration took, int deleted) {
        conntrackReconcile.labelValues(f.apiName()).observe(took.toNanos() / 1e9);
        conntrackDeleted.labelValues(f.apiName()).inc(deleted);
    }

    /** The Prometheus text exposition of everything registered. */
    public Response scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16384);
        try {
            PrometheusTextFormatWriter.create().write(out, registry.scrape());
        } catch (IOException e) {
            return Response.text(500, "scrape failed\n");
        }
        return new Response(200, PrometheusTextFormatWriter.CONTENT_TYPE, java.util.Map.of(), out.toString(StandardCharsets.UTF_8));
    }

    private static double[] programmingBuckets() {
        java.util.List<Double> b = new java.util.ArrayList<>(java.util.List.of(0.01, 0.025, 0.05, 0.1, 0.25, 0.5));
        for (int s = 1; s <= 59; s++) b.add((double) s);
        for (int s = 60; s <= 115; s += 5) b.add((double) s);
        for (int s = 120; s <= 300; s += 30) b.add((double) s);
        return b.stream().mapToDouble(Double::doubleValue).toArray();
    }
}
