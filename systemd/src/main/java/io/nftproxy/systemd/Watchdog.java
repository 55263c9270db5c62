package io.nftproxy.systemd;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends {@code WATCHDOG=1} at half of systemd's {@code WatchdogSec}, but only while a liveness check holds.
 *
 * <p>A timer that pings unconditionally proves only that one JVM thread is scheduled; the failure worth restarting
 * for is a wedged sync loop (a hung netlink call, a deadlock) while the rest of the JVM looks fine. So every tick asks
 * the supplied check first — typically "the sync loop finished or attempted a sync recently" — and withholds the ping
 * while it fails; after {@code WatchdogSec} without a ping systemd kills the process with SIGABRT and
 * {@code Restart=always} brings it back. The kernel keeps the last committed table meanwhile, so traffic keeps flowing.
 */
public final class Watchdog implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Watchdog.class);
    private static final Duration MIN_PERIOD = Duration.ofMillis(1);
    /**
     * The watchdog period left for the exit once pings stop: longer than the unit's TimeoutStopSec (20 s), so the stop
     * timeout, not the watchdog, bounds it. The JVM's exit can take seconds (the first stop of a new jar writes the
     * class-data archive), and a watchdog kill then would leave the unit failed after a clean stop.
     */
    static final Duration EXIT_ALLOWANCE = Duration.ofSeconds(30);

    private final SdNotify notify;
    private final BooleanSupplier alive;
    private final Optional<Duration> period;
    private final ScheduledExecutorService timer;
    private final AtomicLong pings = new AtomicLong();
    private final AtomicBoolean withholding = new AtomicBoolean();

    /**
     * Starts pinging if systemd asked for a watchdog ({@code WATCHDOG_USEC}, with {@code WATCHDOG_PID} unset or ours)
     * and {@code NOTIFY_SOCKET} is set; otherwise returns a watchdog that does nothing. Never null, never throws.
     */
    public static Watchdog start(SdNotify notify, BooleanSupplier alive) {
        Objects.requireNonNull(notify, "notify");
        Objects.requireNonNull(alive, "alive");
        Optional<Duration> interval = notify.watchdogInterval();
        if (interval.isEmpty() || !notify.isEnabled()) {
            return new Watchdog(notify, alive, Optional.empty());
        }
        return start(notify, alive, interval.get());
    }

    /** With an explicit systemd watchdog interval; pings go out every {@code interval / 2}. */
    static Watchdog start(SdNotify notify, BooleanSupplier alive, Duration interval) {
        Duration half = interval.dividedBy(2);
        return new Watchdog(notify, alive, Optional.of(half.compareTo(MIN_PERIOD) < 0 ? MIN_PERIOD : half));
    }

    private Watchdog(SdNotify notify, BooleanSupplier alive, Optional<Duration> period) {
        this.notify = notify;
        this.alive = alive;
        this.period = period;
        if (period.isEmpty()) {
            this.timer = null;
            LOG.debug("systemd watchdog not requested; not pinging");
            return;
        }
        this.timer = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "sd-watchdog");
            // Must not keep the JVM alive on its own: shutdown is decided by the daemon, not by its watchdog.
            thread.setDaemon(true);
            return thread;
        });
        long nanos = period.get().toNanos();
        // Fixed rate, first ping at once: systemd arms the timer when the unit starts, and a catch-up burst after a
        // long GC or a suspended VM is harmless (extra pings), while drift could be fatal (a missed deadline).
        timer.scheduleAtFixedRate(this::tick, 0, nanos, TimeUnit.NANOSECONDS);
        LOG.info("systemd watchdog: pinging every {} ms while the liveness check holds", period.get().toMillis());
    }

    private void tick() {
        boolean ok;
        try {
            ok = alive.getAsBoolean();
        } catch (RuntimeException e) {
            // A liveness check that cannot answer is not a pass. Caught here because an exception escaping a
            // scheduled task would silently cancel every later tick.
            LOG.warn("watchdog liveness check threw; treating it as failed", e);
            ok = false;
        }
        if (!ok) {
            if (withholding.compareAndSet(false, true)) {
                LOG.warn("liveness check failed: withholding systemd watchdog pings, systemd restarts nftproxy"
                        + " if this lasts past WatchdogSec");
            }
            return;
        }
        if (withholding.compareAndSet(true, false)) {
            LOG.info("liveness check passes again: systemd watchdog pings resumed");
        }
        if (notify.watchdog()) {
            pings.incrementAndGet();
        }
    }

    /** Whether a ping timer runs (systemd asked for a watchdog and {@link #close()} has not been called). */
    boolean isRunning() {
        return timer != null && !timer.isShutdown();
    }

    /** Time between pings: half of systemd's interval; empty when the watchdog is not in use. */
    Optional<Duration> period() {
        return period;
    }

    /** Pings sent so far (sent datagrams, not withheld or failed ticks): for metrics and tests. */
    long pingsSent() {
        return pings.get();
    }

    /** Whether the last tick withheld its ping because the liveness check failed. */
    boolean isWithholding() {
        return withholding.get();
    }

    /**
     * Stops pinging. Call it last on shutdown, after {@link SdNotify#stopping()}: the last ping gives the exit
     * {@link #EXIT_ALLOWANCE} instead of {@code WatchdogSec}.
     */
    @Override
    public void close() {
        if (timer == null || timer.isShutdown()) {
            return;
        }
        timer.shutdownNow();
        try {
            if (!timer.awaitTermination(1, TimeUnit.SECONDS)) {
                LOG.warn("systemd watchdog thread did not stop within 1 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        notify.send("WATCHDOG=1\nWATCHDOG_USEC=" + EXIT_ALLOWANCE.toNanos() / 1000);
    }
}
