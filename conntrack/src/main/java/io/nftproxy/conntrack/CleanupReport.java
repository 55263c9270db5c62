package io.nftproxy.conntrack;

import io.nftproxy.net.IpFamily;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * What one cleanup did, per family: entries listed (all protocols), UDP entries among them, stale ones found, and of
 * those how many were deleted, already gone, or failed; plus the time spent. The sync loop turns this into
 * {@code kubeproxy_conntrack_reconciler_sync_duration_seconds} and {@code ..._deleted_entries_total}.
 */
public record CleanupReport(List<Family> families) {
    public CleanupReport {
        families = List.copyOf(families);
    }

    /** One family's figures. {@code errorSamples}: the first few failures, for the log. */
    public record Family(IpFamily family, int listed, int udp, int stale, int deleted, int gone, int errors,
                         Duration dumpTime, Duration deleteTime, List<String> errorSamples) {
        public Family {
            errorSamples = List.copyOf(errorSamples);
        }

        public Duration duration() { return dumpTime.plus(deleteTime); }
    }

    public int listed() { return families.stream().mapToInt(Family::listed).sum(); }

    public int stale() { return families.stream().mapToInt(Family::stale).sum(); }

    public int deleted() { return families.stream().mapToInt(Family::deleted).sum(); }

    public int errors() { return families.stream().mapToInt(Family::errors).sum(); }

    public Duration duration() { return families.stream().map(Family::duration).reduce(Duration.ZERO, Duration::plus); }

    @Override public String toString() {
        if (families.isEmpty()) return "nothing to clean";
        return families.stream().map(f -> f.family().apiName() + ": listed " + f.listed() + " (udp " + f.udp() + "), stale "
                + f.stale() + ", deleted " + f.deleted() + ", already gone " + f.gone() + ", errors " + f.errors()
                + ", dump " + f.dumpTime().toMillis() + " ms, delete " + f.deleteTime().toMillis() + " ms")
                .collect(Collectors.joining("; "));
    }
}
