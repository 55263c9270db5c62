package io.nftproxy.sync;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The runner on its own thread and the real clock: the bounds hold with a real scheduler too. */
class SyncRunnerRealTimeTest {
    private static final Duration MIN = Duration.ofMillis(200);
    /** Scheduling slack on a loaded 2-core machine. */
    private static final long EPSILON_MS = 150;

    @Test
    void aRequestIsServedWithinTheMinIntervalPlusEpsilon() throws Exception {
        BlockingQueue<Long> starts = new LinkedBlockingQueue<>();
        SyncRunner s = new SyncRunner(new SyncRunner.Intervals(MIN, Duration.ofHours(1),
                Duration.ofSeconds(1), Duration.ofSeconds(1)), r -> {
            starts.add(System.nanoTime());
            return SyncRunner.Outcome.DONE;
        }, SyncRunner.threadScheduler("sync-test"));
        try {
            long asked = System.nanoTime();
            s.requestSync();
            long first = take(starts);
            double idleMs = (first - asked) / 1e6;

            // Right after a run: the next start waits for the min interval, then comes promptly.
            long askedAgain = System.nanoTime();
            s.requestSync();
            long second = take(starts);
            double busyMs = (second - askedAgain) / 1e6;
            double gapMs = (second - first) / 1e6;
            System.out.printf("SyncRunner real time: idle request served in %.2f ms; request right after a run served in"
                    + " %.1f ms (min interval %d ms, run-to-run %.1f ms)%n", idleMs, busyMs, MIN.toMillis(), gapMs);
            assertTrue(idleMs < EPSILON_MS, "idle request: " + idleMs + " ms");
            assertTrue(gapMs >= MIN.toMillis() - 1, "min interval kept: " + gapMs + " ms");
            assertTrue(busyMs < MIN.toMillis() + EPSILON_MS, "served within min + epsilon: " + busyMs + " ms");
        } finally {
            assertTrue(s.stop(Duration.ofSeconds(1)));
        }
    }

    @Test
    void stopAbandonsAStuckRunWithinTheGrace() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        SyncRunner s = new SyncRunner(new SyncRunner.Intervals(MIN, Duration.ofHours(1),
                Duration.ofSeconds(1), Duration.ofSeconds(1)), r -> {
            started.countDown();
            try {
                Thread.sleep(30_000);
            } catch (InterruptedException e) {
                interrupted.countDown();
            }
            return SyncRunner.Outcome.DONE;
        }, SyncRunner.threadScheduler("sync-test-stuck"));
        s.requestSync();
        assertTrue(started.await(5, TimeUnit.SECONDS));
        long t0 = System.nanoTime();
        assertFalse(s.stop(Duration.ofMillis(200)), "the run was still going");
        long tookMs = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("SyncRunner stop with a stuck run returned in " + tookMs + " ms (grace 200 ms)");
        assertTrue(tookMs < 200 + EPSILON_MS, tookMs + " ms");
        assertTrue(interrupted.await(5, TimeUnit.SECONDS), "the abandoned run was interrupted");
    }

    private static long take(BlockingQueue<Long> q) throws InterruptedException {
        Long v = q.poll(5, TimeUnit.SECONDS);
        assertNotNull(v, "no run within 5 s");
        return v;
    }
}
