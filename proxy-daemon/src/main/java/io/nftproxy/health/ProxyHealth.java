package io.nftproxy.health;

import io.nftproxy.cluster.NodeObject;
import io.nftproxy.net.IpFamily;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The proxy's health, derived rather than set: per IP family the time of the last successful sync and of the oldest
 * change still waiting for one. A family is unhealthy when a change has waited longer than the health timeout
 * (upstream: twice syncPeriod) — and, stricter than kube-proxy, until its first successful sync, so a load
 * balancer never sends traffic to a node whose table was not yet programmed.
 */
public final class ProxyHealth {
    private final Clock clock;
    private final Duration timeout;
    private final Map<IpFamily, Instant> lastUpdated = new EnumMap<>(IpFamily.class);
    private final Map<IpFamily, Instant> oldestPending = new EnumMap<>(IpFamily.class);
    private final Set<IpFamily> families;
    private Boolean nodeEligible;
    private final List<Function<Instant, String>> unhealthyCauses = new ArrayList<>();

    public ProxyHealth(Clock clock, Duration timeout, Set<IpFamily> families) {
        this.clock = clock;
        this.timeout = timeout;
        this.families = Set.copyOf(families);
    }

    /** A change was queued for the family; the first unserved one starts the clock. */
    public synchronized void queued(IpFamily f) { oldestPending.putIfAbsent(f, clock.instant()); }

    /** A sync of the family succeeded: everything queued before it is served. */
    public synchronized void updated(IpFamily f) {
        lastUpdated.put(f, clock.instant());
        oldestPending.remove(f);
    }

    /**
     * A node being deleted, or tainted for deletion by the cluster autoscaler, is no longer eligible for load
     * balancer traffic: /healthz says so early, so connections drain before the node goes.
     */
    public synchronized void node(NodeObject n) {
        nodeEligible = n != null && !n.meta().deleting() && !n.taintKeys().contains(NodeObject.TO_BE_DELETED_TAINT);
    }

    /**
     * An extra condition, derived at each response: while {@code cause} gives a text for the current time the
     * proxy is unhealthy and says why (another process rewriting our tables, an nft that does not answer). Several
     * conditions add up; the response names each that holds.
     */
    public synchronized void unhealthyWhile(Function<Instant, String> cause) {
        unhealthyCauses.add(Objects.requireNonNull(cause));
    }

    /** Health of one family. */
    public record FamilyStatus(Instant lastUpdated, boolean healthy) {}

    /**
     * A consistent view for one response. {@code nodeEligible} is null until the Node object was seen; {@code cause}
     * says why the proxy is unhealthy beyond its families' sync times, or is null.
     */
    public record Status(Instant currentTime, Instant lastUpdated, boolean healthy, Map<IpFamily, FamilyStatus> families,
                         Boolean nodeEligible, String cause) {
        public boolean eligible() { return Boolean.TRUE.equals(nodeEligible); }
    }

    public synchronized Status status() {
        Instant now = clock.instant();
        Map<IpFamily, FamilyStatus> per = new LinkedHashMap<>();
        boolean all = true;
        Instant newest = null;
        for (IpFamily f : IpFamily.values()) {
            if (!families.contains(f)) continue;
            Instant last = lastUpdated.get(f);
            Instant pending = oldestPending.get(f);
            boolean ok = last != null && (pending == null || Duration.between(pending, now).compareTo(timeout) < 0);
            per.put(f, new FamilyStatus(last, ok));
            all &= ok;
            if (last != null && (newest == null || last.isAfter(newest))) newest = last;
        }
        String causes = unhealthyCauses.stream().map(c -> c.apply(now)).filter(Objects::nonNull)
                .collect(Collectors.joining("; "));
        String cause = causes.isEmpty() ? null : causes;
        return new Status(now, newest, all && cause == null, per, nodeEligible, cause);
    }
}
