package io.nftproxy.it.api;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.nft.RulesetGeneration;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads {@code service-ips} as fast as nft lists it, on a thread of its own (for at most two minutes), and keeps
 * the fewest Services a reading held: what a packet could have met while a daemon stopped, started or rewrote the
 * table. A reading counts only if no commit landed while nft read it: the kernel dumps a large map in several
 * messages, and one read across a commit (seen: 988 of 1,000 elements, old and new mixed) is no state the table
 * was ever in. Such readings are counted and left out.
 */
final class ServiceIpsPoller implements AutoCloseable {
    private final AtomicBoolean polling = new AtomicBoolean(true);
    private final AtomicInteger fewest = new AtomicInteger(Integer.MAX_VALUE);
    private final AtomicLong polls = new AtomicLong();
    private final AtomicLong acrossACommit = new AtomicLong();
    private final RulesetGeneration generation;
    private final Thread thread;

    private ServiceIpsPoller(KernelNamespace node) throws IOException {
        generation = RulesetGeneration.openIn(node.handle());
        thread = new Thread(() -> {
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            try {
                while (polling.get() && System.nanoTime() < deadline) {
                    long g = generation.current();
                    int n = ServiceIpsMap.count(node);
                    if (generation.current() != g) {
                        acrossACommit.incrementAndGet();
                        continue;
                    }
                    fewest.accumulateAndGet(n, Math::min);
                    polls.incrementAndGet();
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, "service-ips-poller");
        thread.start();
    }

    static ServiceIpsPoller start(KernelNamespace node) throws IOException { return new ServiceIpsPoller(node); }

    /** Stops polling and waits for the last reading. */
    void stop() throws InterruptedException {
        polling.set(false);
        thread.join(10_000);
    }

    int fewest() { return fewest.get(); }

    long polls() { return polls.get(); }

    long acrossACommit() { return acrossACommit.get(); }

    @Override public void close() throws InterruptedException {
        stop();
        generation.close();
    }
}
