package io.nftproxy.sync;

import io.nftproxy.metrics.ProxyMetrics;
import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.monitor.TableChange;
import io.nftproxy.netlink.monitor.TableChangeListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;

/**
 * What the engine does when the nftables monitor reports a change to our tables: another process's change is
 * repaired by a converging sync, at once or later as {@link TamperBackoff} says; a change the monitor could not
 * attribute (its socket overflowed) is converged on without blaming anyone.
 */
final class TamperResponse implements TableChangeListener {
    private static final Logger LOG = LoggerFactory.getLogger(TamperResponse.class);

    private final TamperBackoff backoff;
    private final ProxyMetrics metrics;
    private final Clock clock;
    private final Runnable convergeNow;
    private final SyncRunner.Scheduler scheduler;

    TamperResponse(TamperBackoff backoff, ProxyMetrics metrics, Clock clock, Runnable convergeNow, SyncRunner.Scheduler scheduler) {
        this.backoff = backoff;
        this.metrics = metrics;
        this.clock = clock;
        this.convergeNow = convergeNow;
        this.scheduler = scheduler;
    }

    @Override public void onTableChange(TableChange change) {
        if (!change.requiresResync()) return;
        if (change.origin() == TableChange.Origin.FOREIGN) {
            repairForeignChange(change);
            return;
        }
        // Lost notifications say nothing about who changed what: say that, rather than blame someone else, and leave
        // the foreign-writer back-off alone.
        LOG.warn("{}", lostTrack(change));
        for (IpFamily f : change.families()) metrics.tamperResync(f);
        convergeNow.run();
    }

    @Override public void onMonitorFailed(Exception cause) {
        LOG.error("nftables monitor stopped error={}; tampering is now repaired only by the periodic converging sync",
                cause.toString());
    }

    /** The log line for a change the monitor could not attribute: an overflow, typically during our own big sync. */
    static String lostTrack(TableChange change) {
        if (change.origin() == TableChange.Origin.OVERFLOW) {
            return "nftables monitor overflowed, resyncing by read-back (its socket dropped notifications, as a big sync "
                    + "of our own can make it; nobody else is blamed): " + change.detail();
        }
        return "nftables monitor lost track of changes to our tables (" + change.detail()
                + "); cannot tell whose they were: resyncing by read-back";
    }

    /** Repairs another process's change now, or later when it keeps changing the table (see TamperBackoff). */
    private void repairForeignChange(TableChange change) {
        TamperBackoff.Decision d = backoff.onForeignChange(clock.instant(), "pid=" + change.pid() + " process=" + change.process());
        if (d.warning() != null) LOG.warn("{} families={} messages={}", d.warning(), change.families(), change.messages());
        if (d.delay() == null) return;
        for (IpFamily f : change.families()) metrics.tamperResync(f);
        if (d.delay().isZero()) convergeNow.run();
        else scheduler.schedule(convergeNow, d.delay().toNanos());
    }
}
