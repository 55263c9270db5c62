package io.nftproxy.metrics;

import io.nftproxy.build.BuildInfo;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.net.IpFamily;
import io.nftproxy.source.ClusterStore;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The metrics kube-proxy 1.36 has and nftproxy added for parity, as a scrape shows them. */
class ProxyMetricsTest {
    private final ClusterStore store = new ClusterStore();
    private final ProxyMetrics metrics = new ProxyMetrics(new PrometheusRegistry(), false, java.time.Clock.systemUTC());

    {
        metrics.changeTracking(() -> store.changeCounts().serviceEvents(), () -> store.changeCounts().servicesPending(),
                () -> store.changeCounts().endpointSliceEvents(), () -> store.changeCounts().endpointSliceChangesPending());
        metrics.undecodableObjects(store::undecodableCounts);
    }

    @Test
    void undecodableObjectsAreCountedByKind() {
        assertTrue(scrape().lines().noneMatch(l -> l.startsWith("nftproxy_undecodable_objects_total{")), "nothing skipped yet");
        store.undecodable("Service");
        store.undecodable("Service");
        store.undecodable("EndpointSlice");
        assertLine("nftproxy_undecodable_objects_total{kind=\"EndpointSlice\"} 1.0");
        assertLine("nftproxy_undecodable_objects_total{kind=\"Service\"} 2.0");
    }

    private String scrape() { return metrics.scrape().body(); }

    private void assertLine(String line) {
        String s = scrape();
        assertTrue(s.lines().anyMatch(line::equals), () -> "no line " + line + " in\n" + s);
    }

    @Test
    void changeCountersCountEventsAndPendingCountsWhatTheNextSyncTakes() {
        ServiceObject svc = new ServiceObject(ObjectMeta.of("demo", "hello"), "ClusterIP", "10.96.0.20", null, null,
                List.of(new ServiceObject.PortSpec("http", "TCP", 80, null, null)), null, null, null, null, null, null, null, null, null);
        EndpointSliceObject slice = new EndpointSliceObject(new ObjectMeta("demo", "hello-abc",
                Map.of(EndpointSliceObject.SERVICE_NAME_LABEL, "hello"), Map.of(), false), "IPv4", List.of(), List.of());
        store.upsertService(svc);
        store.upsertService(svc); // a no-op update: seen, nothing pending
        store.upsertEndpointSlice(slice);
        store.upsertEndpointSlice(slice);
        assertLine("kubeproxy_sync_proxy_rules_service_changes_total 2.0");
        assertLine("kubeproxy_sync_proxy_rules_service_changes_pending 1.0");
        assertLine("kubeproxy_sync_proxy_rules_endpoint_changes_total 2.0");
        assertLine("kubeproxy_sync_proxy_rules_endpoint_changes_pending 1.0");
        store.drainChanges();
        assertLine("kubeproxy_sync_proxy_rules_service_changes_pending 0.0");
        assertLine("kubeproxy_sync_proxy_rules_endpoint_changes_pending 0.0");
        store.deleteEndpointSlice(slice.meta());
        store.deleteService(svc.meta());
        assertLine("kubeproxy_sync_proxy_rules_service_changes_total 3.0");
        assertLine("kubeproxy_sync_proxy_rules_endpoint_changes_total 3.0");
        assertLine("kubeproxy_sync_proxy_rules_endpoint_changes_pending 1.0");
    }

    /** The last-sync and last-queued timestamps are the injected clock's, so a test's clock decides them. */
    @Test
    void timestampsReadTheInjectedClock() {
        java.time.Clock clock = java.time.Clock.fixed(java.time.Instant.ofEpochSecond(1_700_000_000L), java.time.ZoneOffset.UTC);
        ProxyMetrics m = new ProxyMetrics(new PrometheusRegistry(), false, clock);
        m.queued(IpFamily.IPV4);
        m.sync(IpFamily.IPV6, false, Duration.ofMillis(5), 3);
        String s = m.scrape().body();
        assertEquals(1.7e9, value(s, "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family=\"IPv4\"}"), s);
        assertEquals(1.7e9, value(s, "kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family=\"IPv6\"}"), s);
    }

    private static double value(String scrape, String series) {
        return scrape.lines().filter(l -> l.startsWith(series + " ")).mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1)))
                .findFirst().orElseThrow(() -> new AssertionError("no " + series + " in\n" + scrape));
    }

    @Test
    void buildInfoNamesVersionCommitAndDate() {
        BuildInfo b = BuildInfo.current();
        String s = scrape();
        assertTrue(s.lines().anyMatch(l -> l.startsWith("nftproxy_build_info{") && l.contains("version=\"" + b.version() + "\"")
                && l.contains("git_commit=\"" + b.commit() + "\"") && l.contains("build_date=\"" + b.date() + "\"")
                && l.endsWith("} 1")), s);
    }

    @Test
    void conntrackReconcilerPairHasKubeProxysNamesLabelsAndBuckets() {
        metrics.conntrackReconciled(IpFamily.IPV4, Duration.ofMillis(3), 2);
        assertLine("kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family=\"IPv4\"} 2.0");
        assertLine("kubeproxy_conntrack_reconciler_sync_duration_seconds_bucket{ip_family=\"IPv4\",le=\"0.002\"} 0");
        assertLine("kubeproxy_conntrack_reconciler_sync_duration_seconds_bucket{ip_family=\"IPv4\",le=\"0.004\"} 1");
        assertLine("kubeproxy_conntrack_reconciler_sync_duration_seconds_bucket{ip_family=\"IPv4\",le=\"16.384\"} 1");
    }

    /** One metric of kube-proxy 1.36 in nftables mode (pkg/proxy/metrics RegisterMetrics): name, type, labels. */
    record Upstream(String name, String type, List<String> labels, double[] buckets) {}

    private static double[] exponential(double start, double factor, int n) {
        double[] b = new double[n];
        for (int i = 0; i < n; i++) b[i] = start * Math.pow(factor, i);
        return b;
    }

    private static double[] programmingBuckets() {
        List<Double> b = new java.util.ArrayList<>(List.of(0.25, 0.5));
        for (int s = 1; s <= 59; s++) b.add((double) s);
        for (int s = 60; s <= 115; s += 5) b.add((double) s);
        for (int s = 120; s <= 300; s += 30) b.add((double) s);
        return b.stream().mapToDouble(Double::doubleValue).toArray();
    }

    static final List<Upstream> KUBE_PROXY_1_36_NFTABLES = List.of(
            new Upstream("kubeproxy_sync_proxy_rules_duration_seconds", "histogram", List.of("ip_family"), exponential(0.001, 2, 15)),
            new Upstream("kubeproxy_sync_full_proxy_rules_duration_seconds", "histogram", List.of("ip_family"), exponential(0.001, 2, 15)),
            new Upstream("kubeproxy_sync_partial_proxy_rules_duration_seconds", "histogram", List.of("ip_family"), exponential(0.001, 2, 15)),
            new Upstream("kubeproxy_sync_proxy_rules_last_timestamp_seconds", "gauge", List.of("ip_family"), null),
            new Upstream("kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds", "gauge", List.of("ip_family"), null),
            new Upstream("kubeproxy_network_programming_duration_seconds", "histogram", List.of("ip_family"), programmingBuckets()),
            new Upstream("kubeproxy_sync_proxy_rules_endpoint_changes_pending", "gauge", List.of(), null),
            new Upstream("kubeproxy_sync_proxy_rules_endpoint_changes_total", "counter", List.of(), null),
            new Upstream("kubeproxy_sync_proxy_rules_service_changes_pending", "gauge", List.of(), null),
            new Upstream("kubeproxy_sync_proxy_rules_service_changes_total", "counter", List.of(), null),
            new Upstream("kubeproxy_sync_proxy_rules_nftables_sync_failures_total", "counter", List.of("ip_family"), null),
            new Upstream("kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total", "counter", List.of("ip_family"), null),
            new Upstream("kubeproxy_proxy_healthz_total", "counter", List.of("code"), null),
            new Upstream("kubeproxy_proxy_livez_total", "counter", List.of("code"), null),
            new Upstream("kubeproxy_sync_proxy_rules_no_local_endpoints_total", "gauge", List.of("traffic_policy", "ip_family"), null),
            new Upstream("kubeproxy_conntrack_reconciler_sync_duration_seconds", "histogram", List.of("ip_family"), exponential(0.001, 2, 15)),
            new Upstream("kubeproxy_conntrack_reconciler_deleted_entries_total", "counter", List.of("ip_family"), null));

    /**
     * Every metric kube-proxy 1.36 registers in nftables mode is here with its type and label names, and a histogram
     * has at least upstream's bucket bounds, so dashboards, alerts and fleet-wide sums keep working.
     */
    @Test
    void kubeProxysNftablesMetricsHaveItsNamesTypesLabelsAndBuckets() {
        metrics.sync(IpFamily.IPV4, true, Duration.ofMillis(2), 10);
        metrics.sync(IpFamily.IPV4, false, Duration.ofMillis(1), 1);
        metrics.queued(IpFamily.IPV4);
        metrics.programmingLatency(IpFamily.IPV4, Duration.ofMillis(40));
        metrics.syncFailed(IpFamily.IPV4);
        metrics.cleanupFailed(IpFamily.IPV4);
        metrics.healthz(200);
        metrics.livez(200);
        metrics.noLocalEndpoints(IpFamily.IPV4, 0, 0);
        metrics.conntrackReconciled(IpFamily.IPV4, Duration.ofMillis(1), 0);
        String s = scrape();
        List<String> problems = new java.util.ArrayList<>();
        for (Upstream u : KUBE_PROXY_1_36_NFTABLES) {
            if (!s.contains("# TYPE " + u.name() + " " + u.type() + "\n")) {
                problems.add(u.name() + ": no " + u.type());
                continue;
            }
            String sample = u.type().equals("histogram") ? u.name() + "_count" : u.name();
            String line = s.lines().filter(l -> l.startsWith(sample + "{") || l.startsWith(sample + " ")).findFirst().orElse(null);
            if (line == null) {
                problems.add(u.name() + ": no sample");
                continue;
            }
            List<String> labels = line.contains("{")
                    ? java.util.Arrays.stream(line.substring(line.indexOf('{') + 1, line.indexOf('}')).split(","))
                            .map(kv -> kv.substring(0, kv.indexOf('='))).sorted().toList()
                    : List.of();
            if (!labels.equals(u.labels().stream().sorted().toList())) problems.add(u.name() + ": labels " + labels);
            if (u.buckets() != null) {
                for (double b : u.buckets()) {
                    boolean found = s.lines().filter(l -> l.startsWith(u.name() + "_bucket{"))
                            .anyMatch(l -> Math.abs(Double.parseDouble(l.replaceAll(".*le=\"([^\"]+)\".*", "$1")) - b) < 1e-9);
                    if (!found) problems.add(u.name() + ": no bucket " + b);
                }
            }
        }
        assertEquals(List.of(), problems);
    }
}
