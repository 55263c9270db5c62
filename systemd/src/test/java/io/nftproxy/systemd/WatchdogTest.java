package io.nftproxy.systemd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Watchdog against a real notify socket, with WATCHDOG_USEC=200000 (pings every 100 ms). */
class WatchdogTest {
    private static final String USEC = "200000";
    private static final Duration PERIOD = Duration.ofMillis(100);

    @TempDir
    Path dir;

    private SdNotify notify(NotifyReceiver receiver, Map<String, String> extra) {
        Map<String, String> env = new java.util.HashMap<>(extra);
        env.put("NOTIFY_SOCKET", receiver.notifySocket());
        return new SdNotify(env, 4242);
    }

    @Test
    void pingsAtHalfTheInterval() throws IOException {
        try (NotifyReceiver receiver = NotifyReceiver.atPath(dir);
             Watchdog watchdog = Watchdog.start(notify(receiver, Map.of("WATCHDOG_USEC", USEC, "WATCHDOG_PID", "4242")),
                     () -> true)) {
            assertTrue(watchdog.isRunning());
            assertEquals(Optional.of(PERIOD), watchdog.period());

            assertEquals(Optional.of("WATCHDOG=1"), receiver.receive(Duration.ofSeconds(2)), "first ping at once");
            long first = System.nanoTime();
            List<Long> arrivals = new ArrayList<>();
            for (String message : receiver.receiveFor(Duration.ofMillis(1_000))) {
                assertEquals("WATCHDOG=1", message);
                arrivals.add((System.nanoTime() - first) / 1_000_000);
            }
            // 10 pings in 1 s at 100 ms; wide bounds for a loaded 2-core machine, but a period of 200 ms (the full
            // interval, which would let systemd time out) or 50 ms would fall outside.
            assertTrue(arrivals.size() >= 7 && arrivals.size() <= 13, "pings in 1 s: " + arrivals.size());
            assertTrue(watchdog.pingsSent() >= 8, "counted " + watchdog.pingsSent());
            System.out.printf("watchdog: %d pings in 1 s after the first (expected 10)%n", arrivals.size());
        }
    }

    @Test
    void failingLivenessWithholdsPingsUntilItRecovers() throws IOException {
        AtomicBoolean alive = new AtomicBoolean(true);
        try (NotifyReceiver receiver = NotifyReceiver.atPath(dir);
             Watchdog watchdog = Watchdog.start(notify(receiver, Map.of("WATCHDOG_USEC", USEC)), alive::get)) {
            for (int i = 0; i < 3; i++) {
                assertEquals(Optional.of("WATCHDOG=1"), receiver.receive(Duration.ofSeconds(2)));
            }
            alive.set(false);
            receiver.receiveFor(PERIOD.multipliedBy(2)); // a ping already past its check may still arrive
            assertEquals(List.of(), receiver.receiveFor(Duration.ofMillis(500)), "no pings while wedged");
            assertTrue(watchdog.isWithholding());
            assertTrue(watchdog.isRunning(), "still ticking, only withholding");

            alive.set(true);
            assertEquals(Optional.of("WATCHDOG=1"), receiver.receive(Duration.ofSeconds(2)), "pings resume");
            assertFalse(watchdog.isWithholding());
        }
    }

    @Test
    void throwingLivenessCheckCountsAsFailedAndDoesNotKillTheTimer() throws IOException {
        AtomicInteger calls = new AtomicInteger();
        AtomicBoolean broken = new AtomicBoolean(true);
        try (NotifyReceiver receiver = NotifyReceiver.atPath(dir);
             Watchdog watchdog = Watchdog.start(notify(receiver, Map.of("WATCHDOG_USEC", USEC)), () -> {
                 calls.incrementAndGet();
                 if (broken.get()) {
                     throw new IllegalStateException("sync loop state unreadable");
                 }
                 return true;
             })) {
            assertEquals(List.of(), receiver.receiveFor(Duration.ofMillis(400)));
            assertTrue(calls.get() >= 2, "the check keeps being asked: " + calls.get());
            broken.set(false);
            assertEquals(Optional.of("WATCHDOG=1"), receiver.receive(Duration.ofSeconds(2)));
            // The count moves after the send returns, so the receiver can see the ping first: wait for it, bounded.
            long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            while (watchdog.pingsSent() < 1 && System.nanoTime() < until) Thread.onSpinWait();
            assertTrue(watchdog.pingsSent() >= 1);
        }
    }

    @Test
    void closeStopsThePings() throws IOException {
        try (NotifyReceiver receiver = NotifyReceiver.atPath(dir)) {
            Watchdog watchdog = Watchdog.start(notify(receiver, Map.of("WATCHDOG_USEC", USEC)), () -> true);
            assertEquals(Optional.of("WATCHDOG=1"), receiver.receive(Duration.ofSeconds(2)));
            watchdog.close();
            assertFalse(watchdog.isRunning());
            // The last message gives the exit more than WatchdogSec (a JVM writing its class-data archive is slow).
            List<String> last = receiver.receiveFor(Duration.ofMillis(200));
            assertTrue(last.contains("WATCHDOG=1\nWATCHDOG_USEC=30000000"), last.toString());
            assertEquals(List.of(), receiver.receiveFor(Duration.ofMillis(400)), "no pings after close");
            watchdog.close(); // idempotent
            assertEquals(List.of(), receiver.receiveFor(Duration.ofMillis(100)), "a second close sends nothing");
        }
    }

    @Test
    void anotherProcessesWatchdogIsNotOurs() throws IOException {
        long other = ProcessHandle.current().pid() + 1;
        try (NotifyReceiver receiver = NotifyReceiver.atPath(dir)) {
            SdNotify notify = new SdNotify(Map.of("NOTIFY_SOCKET", receiver.notifySocket(), "WATCHDOG_USEC", USEC,
                    "WATCHDOG_PID", Long.toString(other)));
            try (Watchdog watchdog = Watchdog.start(notify, () -> true)) {
                assertFalse(watchdog.isRunning());
                assertEquals(Optional.empty(), watchdog.period());
                assertEquals(List.of(), receiver.receiveFor(Duration.ofMillis(400)));
            }
        }
    }

    @Test
    void withoutWatchdogUsecOrNotifySocketNothingRuns() throws IOException {
        try (NotifyReceiver receiver = NotifyReceiver.atPath(dir);
             Watchdog noUsec = Watchdog.start(new SdNotify(Map.of("NOTIFY_SOCKET", receiver.notifySocket())),
                     () -> true);
             Watchdog noSocket = Watchdog.start(new SdNotify(Map.of("WATCHDOG_USEC", USEC)), () -> true)) {
            assertFalse(noUsec.isRunning());
            assertFalse(noSocket.isRunning());
            assertEquals(List.of(), receiver.receiveFor(Duration.ofMillis(300)));
        }
    }
}
