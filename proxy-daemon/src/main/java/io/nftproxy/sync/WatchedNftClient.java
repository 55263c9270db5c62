package io.nftproxy.sync;

import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.UnrecognisedRuleException;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * An {@link NftClient} that knows which call is under way and since when, so a hanging {@code nft} is seen while
 * it hangs: the daemon logs once per call that passes {@link #SLOW} ({@link #overdue}) and /healthz names it as the
 * cause ({@link #waiting}). An exec'd nft waits for its timeout (a minute) before it fails; until issue 10 that
 * minute passed without a word and without a health server.
 */
final class WatchedNftClient implements NftClient {
    /** Longer than any call of a healthy nft, even the read-back of a 10k-service table. */
    static final Duration SLOW = Duration.ofSeconds(5);

    private record Call(String what, long startNanos, long serial) {}

    private final NftClient client;
    private final LongSupplier nanoTime;
    private volatile Call current;
    private long serial;
    private long reportedSerial = -1;

    WatchedNftClient(NftClient client, LongSupplier nanoTime) {
        this.client = client;
        this.nanoTime = nanoTime;
    }

    /**
     * The current call's warning, the first time it is seen past {@link #SLOW}; null otherwise (no call, a quick one,
     * or one already reported).
     */
    synchronized String overdue() {
        Call c = current;
        if (c == null || c.serial() == reportedSerial || elapsed(c).compareTo(SLOW) < 0) return null;
        reportedSerial = c.serial();
        return describeWait(c) + "; still waiting, up to the nft timeout";
    }

    /** While a call has taken longer than {@link #SLOW}: what it is and for how long; else null. */
    String waiting() {
        Call c = current;
        return c == null || elapsed(c).compareTo(SLOW) < 0 ? null : describeWait(c);
    }

    private String describeWait(Call c) {
        return "waiting for nft to answer the " + c.what() + " since " + elapsed(c).toSeconds() + "s (" + client.describe() + ")";
    }

    private Duration elapsed(Call c) { return Duration.ofNanos(nanoTime.getAsLong() - c.startNanos()); }

    /** One nft call, with whatever checked exception it throws. */
    @FunctionalInterface
    private interface NftCall<T, E extends Exception> {
        T call() throws E;
    }

    private <T, E extends Exception> T watched(String what, NftCall<T, E> call) throws E {
        synchronized (this) {
            current = new Call(what, nanoTime.getAsLong(), ++serial);
        }
        try {
            return call.call();
        } finally {
            current = null;
        }
    }

    @Override public void apply(Transaction tx) {
        watched("transaction", () -> {
            client.apply(tx);
            return null;
        });
    }

    @Override public String listTableJson(IpFamily family) {
        return watched("listing of the " + family.nftFamily() + " table", () -> client.listTableJson(family));
    }

    @Override public TableContent readTable(IpFamily family) throws UnrecognisedRuleException {
        // Includes parsing the listing (1.4 s at 10k Services): well within SLOW.
        return watched("read-back of the " + family.nftFamily() + " table", () -> client.readTable(family));
    }

    @Override public Capabilities capabilities() {
        return watched("capabilities probe", client::capabilities);
    }

    @Override public String describe() { return client.describe(); }

    @Override public void close() { client.close(); }
}
