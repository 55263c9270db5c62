package io.nftproxy.metrics;

import io.nftproxy.build.BuildInfo;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.proxy.IpFamily;
import io.nftproxy.source.ClusterStore;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The metrics kube-proxy 1.36 has and nftproxy added for parity, as a scrape shows them. */
class ProxyMetricsTest {
    private final ClusterStore store = new ClusterStore();
    private final ProxyMetrics metrics = new ProxyMetrics(new PrometheusRegistry(), false);

    {
        metrics.changeTracking(() -> store.changeCounts().serviceEvents(), () -> store.changeCounts().servicesPending(),
                () -> store.changeCounts().endpointSliceEvents(), () -> store.changeCounts().endpointSliceChangesPending());
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
}
