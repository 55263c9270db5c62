package io.nftproxy.sync;

import io.nftproxy.conntrack.CleanupReport;
import io.nftproxy.conntrack.StaleFlowFilter;
import io.nftproxy.health.HealthCheckNodePorts;
import io.nftproxy.health.ServiceHealth;
import io.nftproxy.metrics.ProxyMetrics;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What follows a successful sync: the health-check NodePort servers and the deletion of stale UDP conntrack
 * entries. Both are brought up to date from the sync's deltas when the previous follow-up finished, and from the
 * whole state otherwise, so a failed follow-up is made good by the next sync. Sync thread only.
 */
final class SyncFollowUps {
    private static final Logger LOG = LoggerFactory.getLogger(SyncFollowUps.class);

    private final SyncEngine.NodeAccess network;
    private final HealthCheckNodePorts healthCheckNodePorts;
    private final ProxyMetrics metrics;
    /** Health-check services by {@code ns/name}, kept up to date service by service. */
    private final Map<String, ServiceHealth> healthChecks = new TreeMap<>();
    private final Map<IpFamily, StaleFlowFilter> lastUdp = new EnumMap<>(IpFamily.class);
    /** The last follow-up did not finish: the next one starts from the whole state. */
    private boolean pending = true;
    /** A conntrack cleanup is due or failed; the next sync looks at the whole filters. */
    private boolean conntrackPending = true;

    SyncFollowUps(SyncEngine.NodeAccess network, HealthCheckNodePorts healthCheckNodePorts, ProxyMetrics metrics) {
        this.network = network;
        this.healthCheckNodePorts = healthCheckNodePorts;
        this.metrics = metrics;
    }

    void after(ProxySync.Result result, NodeContext node) {
        // Until this finishes, the next sync's deltas alone would not bring health checks and conntrack up to date.
        boolean whole = result.level().wholeCluster() || pending;
        pending = true;
        if (whole) {
            healthChecks.clear();
            healthChecks.putAll(ServiceHealth.of(List.of(result.state(IpFamily.IPV4), result.state(IpFamily.IPV6))));
        } else {
            for (ServiceDelta d : result.deltas()) {
                healthChecks.remove(d.service());
                healthChecks.putAll(ServiceHealth.of(d.after().values()));
            }
        }
        List<InetAddress> addresses = listenAddresses(node);
        boolean serversDone = true;
        try {
            // The servers' sockets must belong to the node's network: created on a thread that is in it.
            network.call(() -> {
                healthCheckNodePorts.sync(Map.copyOf(healthChecks), addresses);
                return null;
            });
        } catch (Exception e) {
            LOG.warn("health-check NodePort servers not updated error={}; retried after the next sync", e.toString());
            serversDone = false;
        }
        cleanConntrack(result, whole);
        pending = !serversDone;
    }

    /** Where health-check NodePorts listen: every address when nodePortAddresses matches all, else the node port IPs. */
    private static List<InetAddress> listenAddresses(NodeContext node) {
        for (var p : node.nodePortAddresses()) {
            if (p.isMatchAll()) return List.of(address(new byte[16]));
        }
        List<InetAddress> listen = new ArrayList<>();
        for (IpFamily f : IpFamily.values()) {
            for (IpAddress ip : node.nodePortIPs(f)) listen.add(address(ip.bytes()));
        }
        return listen;
    }

    private static InetAddress address(byte[] bytes) {
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // only for a length other than 4 or 16
        }
    }

    /** Whether a partial sync changed what some Service contributes to the UDP stale-flow filters. */
    private static boolean udpChanged(List<ServiceDelta> deltas) {
        for (ServiceDelta d : deltas) {
            for (IpFamily f : IpFamily.values()) {
                if (StaleFlowFilter.of(d.after(f)).changedSince(StaleFlowFilter.of(d.before(f)))) return true;
            }
        }
        return false;
    }

    /**
     * Stale UDP flows go right after the sync that made them stale, so clients move within a second. Returns what
     * the cleanup did, or null when none was due or it failed (logged).
     */
    CleanupReport cleanConntrack(ProxySync.Result result, boolean whole) {
        // The filters are the union of every Service's part: if no changed Service's part changed, neither did they,
        // and the whole state need not be gathered to find that out.
        if (!whole && !conntrackPending && !udpChanged(result.deltas())) return null;
        conntrackPending = true;
        boolean due = false;
        Map<IpFamily, StaleFlowFilter> now = new EnumMap<>(IpFamily.class);
        for (IpFamily f : IpFamily.values()) {
            StaleFlowFilter filter = StaleFlowFilter.of(result.state(f));
            now.put(f, filter);
            due |= filter.changedSince(lastUdp.get(f));
        }
        if (!due) {
            conntrackPending = false;
            return null;
        }
        try {
            CleanupReport report = network.cleanConntrack(result.state(IpFamily.IPV4), result.state(IpFamily.IPV6));
            for (CleanupReport.Family fr : report.families()) metrics.conntrackReconciled(fr.family(), fr.duration(), fr.deleted());
            lastUdp.clear();
            lastUdp.putAll(now);
            conntrackPending = false;
            if (report.deleted() > 0 || report.errors() > 0) {
                LOG.info("conntrack cleanup listed={} stale={} deleted={} errors={} took={}ms", report.listed(),
                        report.stale(), report.deleted(), report.errors(), report.duration().toMillis());
            }
            return report;
        } catch (Exception e) {
            LOG.warn("conntrack cleanup failed error={}; retried after the next sync", e.toString());
            return null;
        }
    }
}
