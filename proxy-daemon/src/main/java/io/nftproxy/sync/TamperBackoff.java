package io.nftproxy.sync;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * How soon to repair a table that another process changed. A few repairs a minute go out at once (someone ran
 * {@code nft flush ruleset} by hand); beyond that the writer is persistent (kube-proxy left running, a second
 * proxy), and answering each of its rewrites at once makes two writers fight many times a second for ever (issue
 * 10). Then repairs back off exponentially, the log names the writer once per back-off step, and the proxy reports
 * unhealthy with the cause until the writer has been quiet for {@link #QUIET}. Pure apart from the times handed in;
 * thread-safe.
 */
public final class TamperBackoff {
    /** Repairs per {@link #WINDOW} that go out at once. */
    static final int FREE_REPAIRS = 5;
    static final Duration WINDOW = Duration.ofMinutes(1);
    static final Duration FIRST_DELAY = Duration.ofSeconds(2);
    /** Shorter than {@link #QUIET}: a writer that changes the table once per repair is still that writer. */
    static final Duration MAX_DELAY = Duration.ofMinutes(1);
    /** A writer unheard of for this long is gone: back to repairing at once, and healthy. */
    static final Duration QUIET = Duration.ofMinutes(2);

    /**
     * What to do about one foreign change.
     *
     * @param delay   when to repair: zero for now, null when a repair is already scheduled
     * @param warning a line to log, or null when this step was logged already
     */
    public record Decision(Duration delay, String warning) {}

    private final Deque<Instant> repairs = new ArrayDeque<>();
    private int step;
    private Instant lastChange;
    private Instant scheduled;
    private int changesThisStep;
    private String writer = "";

    /** A foreign change by {@code writer} (a description: pid and command) was seen at {@code now}. */
    public synchronized Decision onForeignChange(Instant now, String writer) {
        if (lastChange != null && Duration.between(lastChange, now).compareTo(QUIET) >= 0) step = 0;
        lastChange = now;
        this.writer = writer;
        changesThisStep++;
        if (scheduled != null && now.isBefore(scheduled)) return new Decision(null, null);
        while (!repairs.isEmpty() && Duration.between(repairs.peekFirst(), now).compareTo(WINDOW) >= 0) repairs.pollFirst();
        if (step == 0 && repairs.size() < FREE_REPAIRS) {
            repairs.addLast(now);
            scheduled = null;
            return new Decision(Duration.ZERO, "table changed by someone else " + writer + "; converging on it now");
        }
        step++;
        Duration delay = delay(step);
        scheduled = now.plus(delay);
        repairs.addLast(scheduled);
        String warning = "table keeps being changed by someone else " + writer + " (" + changesThisStep
                + " changes since the last repair); next repair in " + delay.toSeconds() + " s, /healthz unhealthy until "
                + "it stops for " + QUIET.toMinutes() + " min; stop the other writer (a kube-proxy or second nftproxy?)";
        changesThisStep = 0;
        return new Decision(delay, warning);
    }

    /** Why the proxy is unhealthy at {@code now}: a persistent foreign writer; null when there is none. */
    public synchronized String unhealthyCause(Instant now) {
        if (step == 0 || lastChange == null || Duration.between(lastChange, now).compareTo(QUIET) >= 0) return null;
        return "another process keeps rewriting the kube-proxy tables: " + writer + "; repairs backed off to every "
                + delay(step).toSeconds() + " s";
    }

    private static Duration delay(int step) {
        Duration d = FIRST_DELAY.multipliedBy(1L << Math.min(step - 1, 20));
        return d.compareTo(MAX_DELAY) > 0 ? MAX_DELAY : d;
    }
}
