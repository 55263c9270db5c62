package io.nftproxy.http;

import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many connections all HTTP servers of the process may hold together, fixed from the descriptor limit at start:
 * half of the descriptors still free then. The other half stays for what the proxy cannot do without (nft's pipes
 * or netlink sockets per transaction, conntrack, the API client, log files), however many servers there are: one
 * per health-check NodePort, each with its own {@link ConnectionLimit}, would otherwise add up past the limit.
 */
public final class DescriptorBudget {
    /** Never less than a few probes' worth, never more than probes could use. */
    static final int MIN = 16, MAX = 4096;

    private static final DescriptorBudget PROCESS = new DescriptorBudget(fromLimits());

    private final int total;
    private final AtomicInteger taken = new AtomicInteger();

    DescriptorBudget(int total) {
        if (total < 1) throw new IllegalArgumentException("total " + total);
        this.total = total;
    }

    /** The budget of this process's servers. */
    public static DescriptorBudget process() { return PROCESS; }

    /** Half the descriptors free at start, bounded by {@link #MIN} and {@link #MAX}; MAX where the JVM cannot tell. */
    static int fromLimits() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean os) {
            return forLimits(os.getMaxFileDescriptorCount(), os.getOpenFileDescriptorCount());
        }
        return MAX;
    }

    static int forLimits(long max, long open) {
        return (int) Math.max(MIN, Math.min(MAX, (max - open) / 2));
    }

    /** Takes one connection's share; false when the budget is spent. */
    boolean tryTake() {
        return taken.getAndUpdate(t -> t < total ? t + 1 : t) < total;
    }

    void release() { taken.decrementAndGet(); }

    public int total() { return total; }

    int taken() { return taken.get(); }
}
