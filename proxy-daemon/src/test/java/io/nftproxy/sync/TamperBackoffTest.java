package io.nftproxy.sync;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A writer that rewrites our table nine times a second gets a handful of repairs a minute, not nine a second. */
class TamperBackoffTest {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final String WRITER = "pid 4242 (kube-proxy)";

    @Test
    void occasionalChangesAreRepairedAtOnce() {
        TamperBackoff b = new TamperBackoff();
        for (int i = 0; i < 20; i++) {
            // One every 15 s: at most four a minute, under the free allowance.
            TamperBackoff.Decision d = b.onForeignChange(T0.plusSeconds(15L * i), WRITER);
            assertEquals(Duration.ZERO, d.delay(), "change " + i);
            assertNull(b.unhealthyCause(T0.plusSeconds(15L * i)));
        }
    }

    @Test
    void aPersistentWriterIsBackedOffLoggedOncePerStepAndMakesUsUnhealthy() {
        TamperBackoff b = new TamperBackoff();
        int repairs = 0, warnings = 0;
        Instant repairDue = null;
        Instant now = T0;
        for (int i = 0; i < 9 * 60; i++) {           // nine changes a second for a minute
            now = T0.plusMillis(111L * i);
            // A scheduled repair that came due counts as one rewrite of ours.
            if (repairDue != null && !now.isBefore(repairDue)) {
                repairs++;
                repairDue = null;
            }
            TamperBackoff.Decision d = b.onForeignChange(now, WRITER);
            if (d.warning() != null) warnings++;
            if (d.delay() == null) continue;
            if (d.delay().isZero()) repairs++;
            else repairDue = now.plus(d.delay());
        }
        assertTrue(repairs <= 10, "repairs in the minute: " + repairs);
        assertTrue(warnings <= 10, "warnings in the minute: " + warnings);
        String cause = b.unhealthyCause(now);
        assertNotNull(cause);
        assertTrue(cause.contains(WRITER), cause);

        // The writer stops: healthy again once it has been quiet, and the next change is repaired at once.
        Instant later = now.plus(TamperBackoff.QUIET);
        assertNull(b.unhealthyCause(later));
        assertEquals(Duration.ZERO, b.onForeignChange(later.plusSeconds(1), WRITER).delay());
    }

    @Test
    void delaysGrowExponentiallyToACap() {
        TamperBackoff b = new TamperBackoff();
        Instant now = T0;
        for (int i = 0; i < TamperBackoff.FREE_REPAIRS; i++) b.onForeignChange(now, WRITER);
        Duration previous = Duration.ZERO;
        for (int i = 0; i < 12; i++) {
            TamperBackoff.Decision d = b.onForeignChange(now, WRITER);
            assertTrue(d.delay().compareTo(previous) >= 0 && d.delay().compareTo(TamperBackoff.MAX_DELAY) <= 0, d.toString());
            previous = d.delay();
            now = now.plus(d.delay());
        }
        assertEquals(TamperBackoff.MAX_DELAY, previous);
    }
}
