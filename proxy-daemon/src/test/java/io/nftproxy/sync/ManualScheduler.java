package io.nftproxy.sync;

import java.time.Duration;
import java.util.PriorityQueue;

/**
 * Virtual time for {@link SyncRunner} tests: nothing runs until the test advances the clock, and then every task
 * that came due runs on the test's thread, in due order, with the clock set to its due time. A task may
 * {@link #elapse} time to stand for its own duration.
 */
public final class ManualScheduler implements SyncRunner.Scheduler {
    private record Entry(long due, long seq, Runnable task) {}

    private final PriorityQueue<Entry> queue =
            new PriorityQueue<>((a, b) -> a.due != b.due ? Long.compare(a.due, b.due) : Long.compare(a.seq, b.seq));
    private long now = 1_000_000_000L; // arbitrary origin: code must not assume time starts at 0
    private long seq;
    private boolean shutdown;

    @Override public long nanoTime() { return now; }

    @Override public SyncRunner.Cancellable schedule(Runnable task, long delayNanos) {
        if (delayNanos < 0) throw new IllegalArgumentException("negative delay " + delayNanos);
        Entry e = new Entry(now + delayNanos, seq++, task);
        queue.add(e);
        return () -> queue.remove(e);
    }

    @Override public boolean shutdown(long timeoutNanos) {
        shutdown = true;
        queue.clear();
        return true;
    }

    /** Moves the clock forward by {@code d}, running what comes due on the way. */
    public void advance(Duration d) {
        long target = now + d.toNanos();
        while (!shutdown && !queue.isEmpty() && queue.peek().due <= target) {
            Entry e = queue.poll();
            now = Math.max(now, e.due);
            e.task.run();
        }
        now = Math.max(now, target);
    }

    /** Runs whatever is due now. */
    public void runDue() { advance(Duration.ZERO); }

    /** Moves the clock without running anything: the time a task takes. */
    public void elapse(Duration d) { now += d.toNanos(); }

    /** How many wake-ups are scheduled. */
    int scheduled() { return queue.size(); }
}
