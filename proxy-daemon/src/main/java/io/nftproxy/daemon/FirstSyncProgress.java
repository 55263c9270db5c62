package io.nftproxy.daemon;

import io.nftproxy.net.IpFamily;
import io.nftproxy.sync.ApplyProgress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * What a long first sync says while it runs: a cold start of 45k Services renders for seconds and is committed in
 * dozens of parts, and before this the journal and {@code systemctl status} said nothing until it was done. At its
 * start, and after each committed part, the systemd status line ({@code STATUS=}) says where it is; the log gets an
 * INFO line at most every {@link #LOG_EVERY_NANOS} (and for each family's last part), so a short first sync adds
 * none and a long one a few. Later syncs say nothing here: their parts are the per-sync log line's business.
 */
final class FirstSyncProgress implements ApplyProgress {
    private static final Logger LOG = LoggerFactory.getLogger(FirstSyncProgress.class);
    static final long LOG_EVERY_NANOS = 2_000_000_000L;

    private final Consumer<String> status;
    private final LongSupplier nanos;
    private volatile boolean done;
    private long lastLogged;

    /** @param status where each status line goes (sd_notify's {@code STATUS=}) */
    FirstSyncProgress(Consumer<String> status, LongSupplier nanos) {
        this.status = status;
        this.nanos = nanos;
        this.lastLogged = nanos.getAsLong();
    }

    /** The first sync starts: the status says what it is working on. */
    void starting(int services, int endpointSlices) {
        if (done) return;
        status.accept("first sync: rendering and applying " + services + " services, " + endpointSlices + " EndpointSlices");
        LOG.info("first sync starts services={} endpointSlices={}", services, endpointSlices);
    }

    /** The first sync succeeded: from now on nothing is said here. */
    void finished() { done = true; }

    @Override public void partCommitted(IpFamily family, int part, int parts, int commandsDone, int commands) {
        if (done) return;
        String table = "table " + family.nftFamily() + " kube-proxy";
        status.accept("first sync: " + table + " part " + part + " of " + parts + " committed (" + commandsDone + " of "
                + commands + " commands)");
        long now = nanos.getAsLong();
        if (part == parts || now - lastLogged >= LOG_EVERY_NANOS) {
            lastLogged = now;
            LOG.info("first sync committed table={} part={} of={} commands={} total={}", table, part, parts, commandsDone, commands);
        }
    }
}
