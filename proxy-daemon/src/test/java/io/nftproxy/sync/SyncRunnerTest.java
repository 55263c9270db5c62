package io.nftproxy.sync;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The runner on virtual time: every expectation is an exact instant, no sleeps. */
class SyncRunnerTest {
    private static final Duration MIN = Duration.ofMillis(100);
    private static final Duration MAX = Duration.ofSeconds(60);
    private static final Duration RETRY = Duration.ofSeconds(1);
    private static final Duration MAX_RETRY = Duration.ofSeconds(8);

    private final ManualScheduler clock = new ManualScheduler();
    private final long origin = clock.nanoTime();
    /** Each run: when it started (ms since origin) and what it was asked. */
    private final List<Run> runs = new ArrayList<>();

    record Run(long startMs, SyncRunner.Request request) {}

    private SyncRunner runner(Consumer<SyncRunner.Request> body) {
        return outcomes(r -> {
            body.accept(r);
            return SyncRunner.Outcome.DONE;
        });
    }

    private SyncRunner outcomes(java.util.function.Function<SyncRunner.Request, SyncRunner.Outcome> body) {
        return new SyncRunner(new SyncRunner.Intervals(MIN, MAX, RETRY, MAX_RETRY), r -> {
            runs.add(new Run(ms(clock.nanoTime()), r));
            return body.apply(r);
        }, clock);
    }

    private long ms(long nanos) { return (nanos - origin) / 1_000_000; }

    private List<Long> starts() { return runs.stream().map(Run::startMs).toList(); }

    @Test
    void nothingRunsBeforeTheFirstRequest() {
        runner(r -> {});
        clock.advance(MAX.multipliedBy(10));
        assertEquals(List.of(), runs);
        assertEquals(0, clock.scheduled());
    }

    @Test
    void aBurstOfRequestsBecomesOneRun() {
        SyncRunner s = runner(r -> {});
        for (int i = 0; i < 1000; i++) s.requestSync();
        clock.runDue();
        assertEquals(List.of(0L), starts());
        clock.advance(MIN.multipliedBy(5));
        assertEquals(1, runs.size(), "served requests leave nothing pending");
    }

    @Test
    void requestsDuringARunGetExactlyOneMoreRunMinIntervalAfterItsEnd() {
        SyncRunner[] s = new SyncRunner[1];
        s[0] = runner(r -> {
            if (runs.size() == 1) {
                clock.elapse(Duration.ofMillis(300)); // the run takes 300 ms, during which events arrive
                for (int i = 0; i < 50; i++) s[0].requestSync();
            }
        });
        s[0].requestSync();
        clock.advance(Duration.ofMillis(399));
        assertEquals(List.of(0L), starts(), "not before end (300) + min (100)");
        clock.advance(Duration.ofMillis(1));
        assertEquals(List.of(0L, 400L), starts());
        assertTrue(runs.get(1).request().requested());
        clock.advance(Duration.ofSeconds(1));
        assertEquals(2, runs.size());
    }

    @Test
    void theMinIntervalSeparatesRunsButAnIdleRunnerServesARequestAtOnce() {
        SyncRunner s = runner(r -> {});
        s.requestSync();
        clock.runDue();
        clock.advance(Duration.ofMillis(30));
        s.requestSync();
        s.requestSync();
        clock.advance(Duration.ofMillis(69));
        assertEquals(List.of(0L), starts());
        clock.advance(Duration.ofMillis(1));
        assertEquals(List.of(0L, 100L), starts());

        clock.advance(Duration.ofMillis(500)); // idle longer than min: the next request runs immediately
        s.requestSync();
        clock.runDue();
        assertEquals(List.of(0L, 100L, 600L), starts());
    }

    @Test
    void theMaxIntervalStartsRunsWhenIdle() {
        SyncRunner s = runner(r -> clock.elapse(Duration.ofMillis(250)));
        s.requestSync();
        clock.runDue();
        clock.advance(MAX.multipliedBy(3));
        assertEquals(List.of(0L, 60_000L, 120_000L, 180_000L), starts(), "start to start, whatever the run takes");
        assertTrue(runs.stream().skip(1).noneMatch(r -> r.request().requested()), "nobody asked for these");
    }

    @Test
    void aRequestResetsTheMaxIntervalClock() {
        SyncRunner s = runner(r -> {});
        s.requestSync();
        clock.runDue();
        clock.advance(Duration.ofSeconds(50));
        s.requestSync();
        clock.runDue();
        clock.advance(Duration.ofSeconds(59));
        assertEquals(List.of(0L, 50_000L), starts());
        clock.advance(Duration.ofSeconds(1));
        assertEquals(List.of(0L, 50_000L, 110_000L), starts());
    }

    @Test
    void failuresBackOffExponentiallyUpToTheCapThenResetOnSuccess() {
        int[] failuresLeft = {6};
        SyncRunner[] s = new SyncRunner[1];
        s[0] = outcomes(r -> {
            clock.elapse(Duration.ofMillis(10));
            // A failure reported as a value and a bug that throws are retried alike.
            if (failuresLeft[0] > 3) {
                failuresLeft[0]--;
                return SyncRunner.Outcome.FAILED;
            }
            if (failuresLeft[0]-- > 0) throw new IllegalStateException("kernel said no");
            if (runs.size() == 7) s[0].requestSync(); // an event during the successful run
            return SyncRunner.Outcome.DONE;
        });
        s[0].requestSync();
        clock.runDue();
        clock.advance(Duration.ofSeconds(2)); // a request during backoff waits for the retry
        s[0].requestSync();
        clock.advance(Duration.ofSeconds(40));
        assertEquals(8, runs.size(), "six failures, one success, the request it left, then quiet until max");
        List<Long> gaps = new ArrayList<>();
        for (int i = 1; i < 8; i++) gaps.add(runs.get(i).startMs() - runs.get(i - 1).startMs() - 10);
        assertEquals(List.of(1000L, 2000L, 4000L, 8000L, 8000L, 8000L, 100L), gaps,
                "end-to-start gaps: 1 s doubling to the 8 s cap, then the min interval once a run succeeded");
        for (int i = 1; i < 7; i++) assertEquals(i, runs.get(i).request().consecutiveFailures());
        assertEquals(0, runs.get(7).request().consecutiveFailures());
        assertEquals(0, s[0].consecutiveFailures());
    }

    @Test
    void backoffArithmeticIsCappedWithoutOverflow() {
        SyncRunner s = new SyncRunner(new SyncRunner.Intervals(MIN, MAX, Duration.ofMillis(250), Duration.ofSeconds(30)),
                r -> SyncRunner.Outcome.DONE, clock);
        assertEquals(Duration.ofMillis(250).toNanos(), s.backoff(1));
        assertEquals(Duration.ofMillis(500).toNanos(), s.backoff(2));
        assertEquals(Duration.ofSeconds(16).toNanos(), s.backoff(7));
        assertEquals(Duration.ofSeconds(30).toNanos(), s.backoff(8));
        assertEquals(Duration.ofSeconds(30).toNanos(), s.backoff(Integer.MAX_VALUE));
    }

    @Test
    void aRunThatAsksForAFollowUpGetsOneWithoutARequestButNotBeforeTheMinInterval() {
        SyncRunner s = outcomes(r -> runs.size() == 1 ? SyncRunner.Outcome.again(Duration.ofMillis(300))
                : runs.size() == 2 ? SyncRunner.Outcome.again(Duration.ofMillis(10)) : SyncRunner.Outcome.DONE);
        s.requestSync();
        clock.runDue();
        clock.advance(Duration.ofSeconds(5));
        assertEquals(List.of(0L, 300L, 400L), starts(), "a follow-up after 300 ms, then one held to the 100 ms min interval");
        assertFalse(runs.get(1).request().requested(), "nobody asked for the follow-ups");
        clock.advance(MAX);
        assertEquals(4, runs.size(), "then only the max interval");
    }

    @Test
    void afterStopNothingRuns() {
        SyncRunner s = runner(r -> {});
        s.requestSync();
        clock.runDue();
        assertTrue(s.stop(Duration.ofSeconds(5)));
        s.requestSync();
        clock.advance(MAX.multipliedBy(3));
        assertEquals(1, runs.size());
    }

    @Test
    void stopFromInsideARunEndsTheLoopAfterIt() {
        SyncRunner[] s = new SyncRunner[1];
        s[0] = runner(r -> {
            s[0].requestSync();
            s[0].stop(Duration.ofSeconds(5));
        });
        s[0].requestSync();
        clock.advance(MAX.multipliedBy(2));
        assertEquals(1, runs.size());
    }

    @Test
    void intervalsAreValidatedWithTheValueInTheMessage() {
        Exception e = assertThrows(IllegalArgumentException.class,
                () -> new SyncRunner.Intervals(Duration.ofSeconds(2), Duration.ofSeconds(1), RETRY, MAX_RETRY));
        assertTrue(e.getMessage().contains("PT1S"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new SyncRunner.Intervals(MIN, MAX, Duration.ZERO, MAX_RETRY));
        assertThrows(IllegalArgumentException.class, () -> new SyncRunner.Intervals(MIN, MAX, RETRY, Duration.ofMillis(1)));
        assertThrows(IllegalArgumentException.class, () -> new SyncRunner.Intervals(Duration.ofMillis(-1), MAX, RETRY, MAX_RETRY));
    }
}
