package io.nftproxy.conntrack;

import io.nftproxy.service.ProxyState;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * Deletes the UDP conntrack entries that point at endpoints no longer serving (see {@link StaleFlowFilter}). Run it
 * after a <em>successful</em> sync, never before: the rules must already send a flow's next packet to a current
 * endpoint, or the deleted entry is re-created toward the old one (kubernetes#105657). Works in the network
 * namespace of the calling thread; put the call on a {@link io.nftproxy.netlink.NetnsThread} for another one.
 *
 * <p>Per family it dumps the table once (about 70 ms for 2,000 entries) and deletes in pipelined batches. The whole
 * call is bounded by {@link #TIMEOUT}; deletes not attempted by then are reported as errors and
 * left to the next cleanup.
 */
public final class ConntrackCleaner {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    /**
     * Cleans the families whose state is given; pass null for a family this node does not proxy. A family without
     * UDP service ports is skipped without a dump. Throws when the table cannot be read at all (no CAP_NET_ADMIN,
     * no conntrack in the kernel); per-entry failures are counted in the report.
     */
    public CleanupReport clean(ProxyState v4, ProxyState v6) throws IOException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        List<CleanupReport.Family> out = new ArrayList<>();
        List<StaleFlowFilter> filters = Stream.of(v4, v6).filter(Objects::nonNull).map(StaleFlowFilter::of)
                .filter(f -> !f.isEmpty()).toList();
        if (filters.isEmpty()) return new CleanupReport(out);
        try (ConntrackTable table = ConntrackTable.open()) {
            for (StaleFlowFilter f : filters) out.add(clean(table, f, deadline));
        }
        return new CleanupReport(out);
    }

    private static CleanupReport.Family clean(ConntrackTable table, StaleFlowFilter filter, long deadline) throws IOException {
        long t0 = System.nanoTime();
        List<FlowEntry> all = table.dump(filter.family(), deadline);
        int udp = (int) all.stream().filter(FlowEntry::isUdp).count();
        List<FlowEntry> stale = all.stream().filter(filter::isStale).toList();
        long t1 = System.nanoTime();
        ConntrackTable.DeleteOutcome o = table.delete(stale, deadline);
        long t2 = System.nanoTime();
        return new CleanupReport.Family(filter.family(), all.size(), udp, stale.size(), o.deleted(), o.gone(),
                o.errors(), Duration.ofNanos(t1 - t0), Duration.ofNanos(t2 - t1), o.errorSamples());
    }
}
