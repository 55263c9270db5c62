package io.nftproxy.health;

import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.http.Response;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProxyHealthTest {
    /** A clock the test moves by hand. */
    static final class ManualClock extends Clock {
        Instant now = Instant.parse("2026-12-02T10:00:00Z");
        @Override public ZoneOffset getZone() { return ZoneOffset.UTC; }
        @Override public Clock withZone(java.time.ZoneId z) { return this; }
        @Override public Instant instant() { return now; }
        void advance(Duration d) { now = now.plus(d); }
    }

    private static NodeObject node(boolean deleting, String... taints) {
        return new NodeObject(new ObjectMeta(null, "node-a", Map.of(), Map.of(), deleting), List.of(), List.of(taints), List.of());
    }

    @Test
    void unhealthyUntilTheFirstSyncOfEveryFamily() {
        ManualClock c = new ManualClock();
        ProxyHealth h = new ProxyHealth(c, Duration.ofSeconds(60), Set.of(IpFamily.IPV4, IpFamily.IPV6));
        h.node(node(false));
        assertFalse(h.status().healthy());
        h.updated(IpFamily.IPV4);
        assertFalse(h.status().healthy(), "IPv6 never synced");
        h.updated(IpFamily.IPV6);
        assertTrue(h.status().healthy());
        assertEquals(200, HealthResponses.healthz(h.status()).status());
    }

    @Test
    void aChangeWaitingLongerThanTheTimeoutMakesItUnhealthy() {
        ManualClock c = new ManualClock();
        ProxyHealth h = new ProxyHealth(c, Duration.ofSeconds(60), Set.of(IpFamily.IPV4));
        h.node(node(false));
        h.updated(IpFamily.IPV4);
        h.queued(IpFamily.IPV4);
        c.advance(Duration.ofSeconds(59));
        h.queued(IpFamily.IPV4);
        assertTrue(h.status().healthy());
        c.advance(Duration.ofSeconds(2));
        assertFalse(h.status().healthy(), "the oldest queued change counts, not the newest");
        Response r = HealthResponses.livez(h.status());
        assertEquals(503, r.status());
        assertTrue(r.body().contains("\"healthy\": false"), r.body());
        h.updated(IpFamily.IPV4);
        assertTrue(h.status().healthy());
    }

    @Test
    void beforeTheFirstSyncLivezSaysAliveAndHealthzSaysNotYet() {
        ManualClock c = new ManualClock();
        ProxyHealth h = new ProxyHealth(c, Duration.ofSeconds(60), Set.of(IpFamily.IPV4));
        h.node(node(false));
        // Waiting for an API server that is not up yet: changes queue, nothing is synced, for longer than the timeout.
        h.queued(IpFamily.IPV4);
        c.advance(Duration.ofMinutes(5));
        assertEquals(503, HealthResponses.healthz(h.status()).status());
        assertEquals(200, HealthResponses.livez(h.status()).status(), "a restart would not make the API server appear");
        h.updated(IpFamily.IPV4);
        assertEquals(200, HealthResponses.healthz(h.status()).status());
    }

    @Test
    void healthzAlsoNeedsAnEligibleNodeButLivezDoesNot() {
        ManualClock c = new ManualClock();
        ProxyHealth h = new ProxyHealth(c, Duration.ofSeconds(60), Set.of(IpFamily.IPV4));
        h.updated(IpFamily.IPV4);
        assertEquals(503, HealthResponses.healthz(h.status()).status(), "node not seen yet");
        h.node(node(false, "ToBeDeletedByClusterAutoscaler"));
        assertEquals(503, HealthResponses.healthz(h.status()).status());
        assertTrue(HealthResponses.healthz(h.status()).body().contains("\"nodeEligible\": false"));
        assertEquals(200, HealthResponses.livez(h.status()).status());
        h.node(node(true));
        assertEquals(503, HealthResponses.healthz(h.status()).status());
        h.node(node(false));
        Response ok = HealthResponses.healthz(h.status());
        assertEquals(200, ok.status());
        assertEquals("application/json", ok.contentType());
        assertTrue(ok.body().contains("\"IPv4\": {\"lastUpdated\": \"2026-12-02T10:00:00Z\", \"healthy\": true}"), ok.body());
    }
}
