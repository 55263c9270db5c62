package io.nftproxy.cli;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Says once that a wait is taking long, while it still goes on: an {@code nft} that hangs left the daemon silent,
 * with no health server, for a minute (issue 10). Closing it before the time is up says nothing.
 */
final class LongWait implements AutoCloseable {
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "long-wait");
        t.setDaemon(true);
        return t;
    });

    private final ScheduledFuture<?> warning;

    private LongWait(ScheduledFuture<?> warning) { this.warning = warning; }

    /** Hands {@code message} to {@code warn} once, if still waiting after {@code after}. */
    static LongWait warnAfter(Duration after, String message, Consumer<String> warn) {
        return new LongWait(TIMER.schedule(() -> warn.accept(message), after.toMillis(), TimeUnit.MILLISECONDS));
    }

    @Override public void close() { warning.cancel(false); }
}
