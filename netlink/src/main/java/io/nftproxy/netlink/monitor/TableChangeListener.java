package io.nftproxy.netlink.monitor;

/**
 * Receives the monitor's verdicts on the monitor's own listener thread, one at a time. A slow listener delays
 * only later deliveries, never the reading of notifications; if it falls far behind, the backlog is replaced by
 * one {@link TableChange.Origin#UNKNOWN} change.
 */
@FunctionalInterface
public interface TableChangeListener {
    void onTableChange(TableChange change);

    /**
     * The monitor stopped reading because of an unexpected socket error; no further changes will be seen. The
     * caller should resync and start a new monitor. Not called on {@link NftablesMonitor#close()}.
     */
    default void onMonitorFailed(Exception cause) {}
}
