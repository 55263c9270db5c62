package io.nftproxy.sync;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Runs one sync task on one thread, as often as asked but within bounds (what kube-proxy calls a
 * bounded-frequency runner):
 * <ul>
 * <li>{@link #requestSync()} never blocks; any number of requests before a run starts are served by that one run
 *     (a single pending slot). A request made while a run is in progress gets one more run after it.</li>
 * <li>At least {@code min} passes between the end of one run and the start of the next, so a burst of events
 *     costs one sync per {@code min}, not one per event.</li>
 * <li>Once the first run happened, a run starts at least every {@code max} (measured start to start) even with
 *     no request, to catch anything missed. Before the first request nothing runs at all: nothing is programmed
 *     before the sources have been listed.</li>
 * <li>A run that fails ({@link Outcome#FAILED}, or throws) is retried after {@code retry}, doubling per consecutive
 *     failure up to {@code maxRetry}; requests wait for the retry rather than hammer a failing kernel. The first
 *     success resets the backoff. What a retry does is the task's business, not the runner's.</li>
 * <li>A run may ask to be followed by another one after a delay ({@link Outcome#again}), for work that is due
 *     later (flushed chains waiting for their delete); the min interval still applies.</li>
 * </ul>
 * Thread-safe. The time source and the thread are a {@link Scheduler}, so tests can drive it on virtual time.
 */
public final class SyncRunner {
    private static final Logger LOG = LoggerFactory.getLogger(SyncRunner.class);
    private static final long NEVER = Long.MAX_VALUE;

    /** The bounds. {@code min ≤ max}, {@code retry ≤ maxRetry}; all positive except {@code min}, which may be zero. */
    public record Intervals(Duration min, Duration max, Duration retry, Duration maxRetry) {
        public Intervals {
            Objects.requireNonNull(min, "min");
            Objects.requireNonNull(max, "max");
            Objects.requireNonNull(retry, "retry");
            Objects.requireNonNull(maxRetry, "maxRetry");
            if (min.isNegative()) throw new IllegalArgumentException("min interval must not be negative, got " + min);
            if (max.compareTo(min) < 0 || max.isZero()) {
                throw new IllegalArgumentException("max interval must be positive and at least the min interval " + min + ", got " + max);
            }
            if (retry.isNegative() || retry.isZero()) throw new IllegalArgumentException("retry interval must be positive, got " + retry);
            if (maxRetry.compareTo(retry) < 0) {
                throw new IllegalArgumentException("max retry interval must be at least the retry interval " + retry + ", got " + maxRetry);
            }
        }
    }

    /**
     * What a run is asked to do.
     *
     * @param requested           whether a {@link #requestSync()} is being served; false for a run only the max
     *                            interval started (or a retry nobody asked for)
     * @param consecutiveFailures how many runs in a row failed before this one
     */
    public record Request(boolean requested, int consecutiveFailures) {}

    /**
     * How a run went, as a value: a failure is an expected outcome (the kernel refused a transaction), not an
     * exception. {@code again}, when not null, asks for another run that long after this one, even without a request.
     */
    public record Outcome(boolean success, Duration again) {
        public static final Outcome DONE = new Outcome(true, null);
        public static final Outcome FAILED = new Outcome(false, null);

        public static Outcome again(Duration after) { return new Outcome(true, Objects.requireNonNull(after)); }
    }

    /** The work. Throwing is a bug, treated like {@link Outcome#FAILED} so that the loop never dies. */
    @FunctionalInterface
    public interface Task {
        Outcome sync(Request request) throws Exception;
    }

    /** Clock and thread. All tasks run one at a time, in due order. */
    public interface Scheduler {
        /** Monotonic time, {@link System#nanoTime()} scale. */
        long nanoTime();

        /** Runs {@code task} once after {@code delayNanos} (0: as soon as possible); the handle cancels it. */
        Cancellable schedule(Runnable task, long delayNanos);

        /**
         * Runs nothing more; waits at most {@code timeoutNanos} for a task in progress, then abandons it (interrupts
         * it and stops waiting). True if nothing was left running.
         */
        boolean shutdown(long timeoutNanos);
    }

    @FunctionalInterface
    public interface Cancellable {
        void cancel();
    }

    private final Intervals intervals;
    private final Task task;
    private final Scheduler scheduler;

    // All guarded by "this".
    private boolean pending;
    /** When a run asked to be followed up; NEVER if it did not. */
    private long followUpDue = NEVER;
    private boolean running;
    private boolean stopped;
    private boolean everRan;
    private long lastStart;
    private long lastEnd;
    private int failures;
    private Cancellable timer;
    private long timerDue = NEVER;

    /** A runner on the given scheduler; for tests with a virtual clock. */
    public SyncRunner(Intervals intervals, Task task, Scheduler scheduler) {
        this.intervals = Objects.requireNonNull(intervals, "intervals");
        this.task = Objects.requireNonNull(task, "task");
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    }

    /** Real time, on one daemon thread named {@code threadName}. */
    public static Scheduler threadScheduler(String threadName) { return new ThreadScheduler(threadName); }

    /** Asks for a run; returns at once. Bursts coalesce into one run. */
    public void requestSync() {
        synchronized (this) {
            if (stopped) return;
            pending = true;
            if (!running) arm();
        }
    }

    /** How many runs in a row have failed; 0 after a success. */
    synchronized int consecutiveFailures() { return failures; }

    /**
     * No run starts after this call. A run in progress may finish within {@code grace}; after that it is
     * interrupted and abandoned, and this returns without waiting for it (so within about {@code grace}).
     * Called from inside the task, it does not wait. Idempotent.
     *
     * @return true if no run was left in progress
     */
    public boolean stop(Duration grace) {
        synchronized (this) {
            stopped = true;
            cancelTimer();
        }
        boolean clean = scheduler.shutdown(grace.toNanos());
        if (!clean) LOG.warn("sync still in progress at stop, abandoned grace_ms={}", grace.toMillis());
        return clean;
    }

    /** When the next run may start, given the state; NEVER if none is due. Caller holds the lock, not running. */
    private long nextDue() {
        if (failures > 0) return lastEnd + Math.max(intervals.min().toNanos(), backoff(failures));
        if (!everRan) return pending ? Long.MIN_VALUE : NEVER;
        long earliest = lastEnd + intervals.min().toNanos();
        if (pending) return earliest;
        return Math.max(Math.min(lastStart + intervals.max().toNanos(), followUpDue), earliest);
    }

    /** {@code retry · 2^(failures-1)}, capped at {@code maxRetry}. */
    long backoff(int consecutiveFailures) {
        long cap = intervals.maxRetry().toNanos();
        long d = intervals.retry().toNanos();
        for (int i = 1; i < consecutiveFailures && d < cap; i++) d = d > cap / 2 ? cap : d * 2;
        return Math.min(d, cap);
    }

    /** Makes sure a timer fires no later than the next due time. Caller holds the lock. */
    private void arm() {
        long due = nextDue();
        if (due == NEVER) {
            cancelTimer();
            return;
        }
        if (timer != null && timerDue <= due) return; // an earlier wake-up re-evaluates when it fires
        cancelTimer();
        long now = scheduler.nanoTime();
        long delay = due == Long.MIN_VALUE ? 0 : Math.max(0, due - now);
        timerDue = due;
        timer = scheduler.schedule(this::fire, delay);
    }

    private void cancelTimer() {
        if (timer != null) timer.cancel();
        timer = null;
        timerDue = NEVER;
    }

    /** Timer callback, on the scheduler's thread: starts a run if one is due, else re-arms. */
    private void fire() {
        Request request;
        synchronized (this) {
            timer = null;
            timerDue = NEVER;
            if (stopped || running) return;
            long due = nextDue();
            if (due == NEVER) return;
            long now = scheduler.nanoTime();
            if (due != Long.MIN_VALUE && now < due) {
                arm();
                return;
            }
            request = new Request(pending, failures);
            pending = false;
            followUpDue = NEVER;
            running = true;
            lastStart = now;
        }
        Throwable failure = null;
        Outcome outcome;
        try {
            outcome = Objects.requireNonNull(task.sync(request), "the task returned no outcome");
        } catch (Throwable t) { // everything, so the loop never dies
            failure = t;
            outcome = Outcome.FAILED;
        }
        synchronized (this) {
            running = false;
            everRan = true;
            lastEnd = scheduler.nanoTime();
            if (outcome.success()) {
                if (failures > 0) LOG.info("sync recovered after_failures={}", failures);
                failures = 0;
                if (outcome.again() != null) followUpDue = lastEnd + outcome.again().toNanos();
            } else {
                failures++;
                long retryMs = TimeUnit.NANOSECONDS.toMillis(Math.max(intervals.min().toNanos(), backoff(failures)));
                if (failure == null) {
                    LOG.warn("sync failed consecutive_failures={} retry_in_ms={}", failures, retryMs);
                } else {
                    // The stack trace once per failure streak: the retries of a persistent bug would repeat it.
                    LOG.error("sync threw consecutive_failures={} retry_in_ms={} cause={}", failures, retryMs, String.valueOf(failure),
                            failures == 1 ? failure : null);
                }
            }
            if (!stopped) arm();
        }
        if (failure instanceof VirtualMachineError e) throw e;
    }

    /** One daemon thread of a single-threaded scheduled executor. */
    static final class ThreadScheduler implements Scheduler {
        private final ScheduledThreadPoolExecutor executor;
        private volatile Thread thread;

        ThreadScheduler(String name) {
            executor = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, name);
                t.setDaemon(true);
                thread = t;
                return t;
            });
            executor.setRemoveOnCancelPolicy(true);
            // Delayed wake-ups are dropped at shutdown: a stopped runner starts nothing.
            executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        }

        @Override public long nanoTime() { return System.nanoTime(); }

        @Override public Cancellable schedule(Runnable task, long delayNanos) {
            ScheduledFuture<?> f = executor.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
            return () -> f.cancel(false);
        }

        @Override public boolean shutdown(long timeoutNanos) {
            executor.shutdown();
            if (Thread.currentThread() == thread) return false; // stopping from inside the run: it is still running
            try {
                if (executor.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS)) return true;
                executor.shutdownNow();
                return false;
            } catch (InterruptedException e) {
                executor.shutdownNow();
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }
}
