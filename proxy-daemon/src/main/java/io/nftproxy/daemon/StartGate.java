package io.nftproxy.daemon;

import io.nftproxy.source.ClusterStore;
import io.nftproxy.sync.SyncEngine;
import io.nftproxy.systemd.SdNotify;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The start gate and the first sync: no sync runs before the store has the whole cluster (a partial first sync would
 * reject Services whose slices had not arrived), the first one reports its progress, and once it programmed every
 * table the daemon is ready (READY=1, {@link #awaitFirstSync}). Sync thread, except the waits.
 */
final class StartGate implements SyncEngine.Lifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(StartGate.class);

    private final ClusterStore store;
    private final SdNotify notify;
    private final FirstSyncProgress progress;
    private final CountDownLatch firstSync = new CountDownLatch(1);
    private volatile Runnable afterFirstSync = () -> { };
    private List<String> lastWaitingFor = List.of();

    StartGate(ClusterStore store, SdNotify notify, FirstSyncProgress progress) {
        this.store = store;
        this.notify = notify;
        this.progress = progress;
    }

    /** Runs once, on the sync thread, after the first sync programmed every table and before it counts as done. */
    void afterFirstSync(Runnable task) { this.afterFirstSync = task; }

    boolean awaitFirstSync(Duration timeout) throws InterruptedException {
        return firstSync.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    boolean firstSyncDone() { return firstSync.getCount() == 0; }

    @Override public boolean mayRun() {
        if (!store.ready()) {
            List<String> waiting = store.waitingFor();
            if (!waiting.equals(lastWaitingFor)) {
                LOG.info("first sync waits for the whole cluster: {} not listed yet; /healthz says 503 until then", waiting);
                lastWaitingFor = waiting;
            }
            return false;
        }
        if (!firstSyncDone()) progress.starting(store.serviceCount(), store.endpointSliceCount());
        return true;
    }

    @Override public void programmed() {
        if (firstSyncDone()) return;
        progress.finished();
        try {
            afterFirstSync.run();
        } catch (RuntimeException e) {
            LOG.warn("after the first sync error={}", e.toString());
        }
        firstSync.countDown();
        notify.ready("tables programmed");
        LOG.info("first sync done services={} endpointSlices={}", store.serviceCount(), store.endpointSliceCount());
    }
}
