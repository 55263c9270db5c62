package io.nftproxy.metrics;

import io.nftproxy.http.Response;
import io.nftproxy.proxy.IpFamily;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The metrics kube-proxy's nftables mode exports, under the same names so existing dashboards and alerts work,
 * plus nftproxy's own (prefixed {@code nftproxy_}). One registry per daemon; tests make their own.
 */
public final class ProxyMetrics {
    private static final double[] SYNC_BUCKETS = {0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256,
            0.512, 1.024, 2.048, 4.096, 8.192, 16.384};

    private final PrometheusRegistry registry;
    private final Histogram syncDuration;
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

    public ProxyMetrics(PrometheusRegistry registry, boolean jvm) {
        this.registry = registry;
        syncDuration = Histogram.builder().name("kubeproxy_sync_proxy_rules_duration_seconds")
                .help("SyncProxyRules latency in seconds").classicUpperBounds(SYNC_BUCKETS).labelNames("ip_family").register(registry);
        fullSyncDuration = Histogram.builder().name("kubeproxy_sync_full_proxy_rules_duration_seconds")
                .help("Full sync latency in seconds").classicUpperBounds(SYNC_BUCKETS).labelNames("ip_family").register(registry);
        partialSyncDuration = Histogram.builder().name("kubeproxy_sync_partial_proxy_rules_duration_seconds")
                .help("Partial sync latency in seconds").classicUpperBounds(SYNC_BUCKETS).labelNames("ip_family").register(registry);
        lastSync = Gauge.builder().name("kubeproxy_sync_proxy_rules_last_timestamp_seconds")
                .help("The last time proxy rules were successfully synced").labelNames("ip_family").register(registry);
        lastQueued = Gauge.builder().name("kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds")
                .help("The last time a sync of proxy rules was queued").labelNames("ip_family").register(registry);
        programmingLatency = Histogram.builder().name("kubeproxy_network_programming_duration_seconds")
                .help("In-cluster network programming latency: EndpointSlice trigger time to kernel commit")
                .classicUpperBounds(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
                .labelNames("ip_family").register(registry);
        syncFailures = Counter.builder().name("kubeproxy_sync_proxy_rules_nftables_sync_failures_total")
                .help("Failed nftables transactions").labelNames("ip_family").register(registry);
        cleanupFailures = Counter.builder().name("kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total")
                .help("Failed stale-chain cleanup transactions").labelNames("ip_family").register(registry);
        noLocalEndpoints = Gauge.builder().name("kubeproxy_sync_proxy_rules_no_local_endpoints_total")
                .help("Service ports with a Local policy and no local endpoints while others exist")
                .labelNames("ip_family", "traffic_policy").register(registry);
        healthz = Counter.builder().name("kubeproxy_proxy_healthz_total").help("/healthz responses by code")
                .labelNames("code").register(registry);
        livez = Counter.builder().name("kubeproxy_proxy_livez_total").help("/livez responses by code")
                .labelNames("code").register(registry);
        invalidObjects = Counter.builder().name("nftproxy_invalid_objects_total")
                .help("API objects or parts of them skipped by validation, or kept with a warning (an externalIP that is another Service's ClusterIP)").labelNames("kind", "field").register(registry);
        tamperRepairs = Counter.builder().name("nftproxy_tamper_resyncs_total")
                .help("Full resyncs started because someone else changed our tables").labelNames("ip_family").register(registry);
        transactionCommands = Counter.builder().name("nftproxy_transaction_commands_total")
                .help("Commands sent to the kernel").labelNames("ip_family").register(registry);
        if (jvm) JvmMetrics.builder().register(registry);
    }

    public void sync(IpFamily f, boolean full, Duration took, int commands) {
        double s = took.toNanos() / 1e9;
        syncDuration.labelValues(label(f)).observe(s);
        (full ? fullSyncDuration : partialSyncDuration).labelValues(label(f)).observe(s);
        lastSync.labelValues(label(f)).set(System.currentTimeMillis() / 1000.0);
        transactionCommands.labelValues(label(f)).inc(commands);
    }

    public void queued(IpFamily f) { lastQueued.labelValues(label(f)).set(System.currentTimeMillis() / 1000.0); }
    public void syncFailed(IpFamily f) { syncFailures.labelValues(label(f)).inc(); }
    public void cleanupFailed(IpFamily f) { cleanupFailures.labelValues(label(f)).inc(); }
    public void programmingLatency(IpFamily f, Duration d) { programmingLatency.labelValues(label(f)).observe(d.toNanos() / 1e9); }
    public void noLocalEndpoints(IpFamily f, int internal, int external) {
        noLocalEndpoints.labelValues(label(f), "internal").set(internal);
        noLocalEndpoints.labelValues(label(f), "external").set(external);
    }
    public void healthz(int code) { healthz.labelValues(Integer.toString(code)).inc(); }
    public void livez(int code) { livez.labelValues(Integer.toString(code)).inc(); }
    public void invalidObject(String kind, String field) { invalidObjects.labelValues(kind, field).inc(); }
    public void tamperResync(IpFamily f) { tamperRepairs.labelValues(label(f)).inc(); }

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

    private static String label(IpFamily f) { return f.apiName(); }
}
