package io.nftproxy.sync;

import io.nftproxy.source.ServiceChanges;

import io.nftproxy.TestClusters;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.nftproxy.sync.SyncPlanner.Reason.AFTER_FAILURE;
import static io.nftproxy.sync.SyncPlanner.Reason.FIRST_SYNC;
import static io.nftproxy.sync.SyncPlanner.Reason.NODE_CONTEXT;
import static io.nftproxy.sync.SyncPlanner.Reason.REQUESTED;
import static io.nftproxy.sync.SyncPlanner.Reason.TIMER;
import static io.nftproxy.sync.SyncPlanner.Reason.WHOLE_CLUSTER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SyncPlannerTest {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final Set<IpFamily> BOTH = Set.of(IpFamily.values());
    private static final ServiceChanges ONE = ServiceChanges.of(Set.of("a/web"));

    private final SyncPlanner planner = new SyncPlanner(Duration.ofMinutes(10), null);
    private final NodeContext node = TestClusters.node();

    private static Map<IpFamily, SyncResult> results(boolean v4ok, boolean v6ok) {
        Map<IpFamily, SyncResult> m = new EnumMap<>(IpFamily.class);
        m.put(IpFamily.IPV4, result(IpFamily.IPV4, v4ok));
        m.put(IpFamily.IPV6, result(IpFamily.IPV6, v6ok));
        return m;
    }

    private static SyncResult result(IpFamily f, boolean ok) {
        return new SyncResult(f, SyncLevel.PARTIAL, 1, 1, 0, false, Duration.ZERO, Duration.ZERO,
                ok ? null : io.nftproxy.netlink.nft.NftException.Kind.FAILED, ok ? null : "no");
    }

    /** Plans and records a sync at {@code now} that went as given. */
    private SyncPlanner.Plan run(ServiceChanges changes, NodeContext n, Instant now, boolean v4ok, boolean v6ok) {
        SyncPlanner.Plan p = planner.plan(changes, n, now);
        planner.done(p, results(v4ok, v6ok), n, now);
        return p;
    }

    @Test
    void theFirstSyncReadsBothTablesBackThenChangesArePartial() {
        SyncPlanner.Plan first = run(ServiceChanges.WHOLE_CLUSTER, node, T0, true, true);
        assertTrue(first.level().wholeCluster());
        assertEquals(BOTH, first.converge());
        assertEquals(Set.of(FIRST_SYNC), first.reasons());

        SyncPlanner.Plan next = run(ONE, node, T0.plusSeconds(1), true, true);
        assertFalse(next.level().wholeCluster());
        assertEquals(Set.of(), next.converge());
        assertEquals(Set.of(), next.reasons());
    }

    @Test
    void aFailedFamilyIsReadBackNextTimeAndOnlyIt() {
        run(ServiceChanges.WHOLE_CLUSTER, node, T0, true, true);
        run(ONE, node, T0.plusSeconds(1), true, false);
        SyncPlanner.Plan p = run(ONE, node, T0.plusSeconds(2), true, true);
        assertTrue(p.level().wholeCluster(), "the failed sync's drained changes are lost: everything is rebuilt");
        assertEquals(Set.of(IpFamily.IPV6), p.converge());
        assertEquals(Set.of(AFTER_FAILURE), p.reasons());
        assertFalse(run(ONE, node, T0.plusSeconds(3), true, true).level().wholeCluster(), "recovered");
    }

    @Test
    void aFirstSyncThatFailsIsStillAFirstSync() {
        run(ServiceChanges.WHOLE_CLUSTER, node, T0, false, true);
        SyncPlanner.Plan p = planner.plan(ONE, node, T0.plusSeconds(1));
        assertEquals(Set.of(IpFamily.IPV4), p.converge());
        assertEquals(Set.of(FIRST_SYNC), p.reasons());
    }

    @Test
    void aRequestedReadBackCoversOneSync() {
        run(ServiceChanges.WHOLE_CLUSTER, node, T0, true, true);
        planner.requestConverge();
        SyncPlanner.Plan p = run(ONE, node, T0.plusSeconds(1), true, true);
        assertEquals(BOTH, p.converge());
        assertEquals(Set.of(REQUESTED), p.reasons());
        assertFalse(run(ONE, node, T0.plusSeconds(2), true, true).level().wholeCluster());
    }

    @Test
    void theTimerReadsBackAgainAfterTheInterval() {
        run(ServiceChanges.WHOLE_CLUSTER, node, T0, true, true);
        assertFalse(run(ONE, node, T0.plusSeconds(599), true, true).level().wholeCluster());
        SyncPlanner.Plan timed = run(ONE, node, T0.plusSeconds(600), true, true);
        assertEquals(BOTH, timed.converge());
        assertEquals(Set.of(TIMER), timed.reasons());
        assertFalse(run(ONE, node, T0.plusSeconds(601), true, true).level().wholeCluster(), "the timer restarts at each read-back");
    }

    @Test
    void aChangedNodeOrARelistRebuildsEverythingWithoutReadingTheKernel() {
        run(ServiceChanges.WHOLE_CLUSTER, node, T0, true, true);
        NodeContext moved = node.withLocalAddresses(List.of(IpAddress.parse("192.168.10.99")));
        SyncPlanner.Plan p = run(ONE, moved, T0.plusSeconds(1), true, true);
        assertTrue(p.level().wholeCluster());
        assertEquals(Set.of(), p.converge());
        assertEquals(Set.of(NODE_CONTEXT), p.reasons());

        SyncPlanner.Plan relisted = run(ServiceChanges.WHOLE_CLUSTER, moved, T0.plusSeconds(2), true, true);
        assertTrue(relisted.level().wholeCluster());
        assertEquals(Set.of(), relisted.converge());
        assertEquals(Set.of(WHOLE_CLUSTER), relisted.reasons());
    }

    /** issue 26: the store says why, the planner decides: each reason that concerns every Service, and its level. */
    @Test
    void eachClusterWideChangeIsARebuildForItsOwnReason() {
        run(ServiceChanges.WHOLE_CLUSTER, node, T0, true, true);
        SyncPlanner.Plan nodeObject = run(wide(ServiceChanges.Wide.NODE), node, T0.plusSeconds(1), true, true);
        assertEquals(SyncLevel.REBUILD, nodeObject.level());
        assertEquals(Set.of(SyncPlanner.Reason.NODE), nodeObject.reasons(), "a Node change is the Node's, not a relist");
        assertFalse(nodeObject.rerender(), "the node context is the same: the models compare inputs");
        for (IpFamily f : IpFamily.values()) assertEquals(SyncLevel.REBUILD, nodeObject.level(f));

        SyncPlanner.Plan cidrs = run(wide(ServiceChanges.Wide.SERVICE_CIDRS), node, T0.plusSeconds(2), true, true);
        assertEquals(SyncLevel.REBUILD, cidrs.level());
        assertEquals(Set.of(SyncPlanner.Reason.SERVICE_CIDRS), cidrs.reasons());
        assertTrue(cidrs.rerender(), "every port renders against the ServiceCIDRs");

        SyncPlanner.Plan whole = run(ServiceChanges.WHOLE_CLUSTER, node, T0.plusSeconds(3), true, true);
        assertEquals(Set.of(WHOLE_CLUSTER), whole.reasons());
        assertTrue(whole.rerender());

        SyncPlanner.Plan partial = run(ONE, node, T0.plusSeconds(4), true, true);
        assertEquals(SyncLevel.PARTIAL, partial.level());
        for (IpFamily f : IpFamily.values()) assertEquals(SyncLevel.PARTIAL, partial.level(f));
    }

    @Test
    void aFamilyConvergesWhileTheOtherRebuilds() {
        run(ServiceChanges.WHOLE_CLUSTER, node, T0, true, true);
        run(ONE, node, T0.plusSeconds(1), false, true);
        SyncPlanner.Plan p = run(ONE, node, T0.plusSeconds(2), true, true);
        assertEquals(SyncLevel.CONVERGE, p.level());
        assertEquals(SyncLevel.CONVERGE, p.level(IpFamily.IPV4));
        assertEquals(SyncLevel.REBUILD, p.level(IpFamily.IPV6), "every Service is rebuilt, the IPv6 table is not read back");
    }

    private static ServiceChanges wide(ServiceChanges.Wide w) { return new ServiceChanges(Set.of(w), Set.of()); }

    @Test
    void anAbandonedSyncIsFollowedByReadingBothTablesBack() {
        run(ServiceChanges.WHOLE_CLUSTER, node, T0, true, true);
        planner.plan(ONE, node, T0.plusSeconds(1));
        planner.abandoned();
        SyncPlanner.Plan p = planner.plan(ONE, node, T0.plusSeconds(2));
        assertEquals(BOTH, p.converge());
        assertEquals(Set.of(AFTER_FAILURE), p.reasons());
    }

    @Test
    void aPlanThatReadsBackRendersEverything() {
        assertThrows(IllegalArgumentException.class, () -> new SyncPlanner.Plan(SyncLevel.REBUILD, BOTH, Set.of(TIMER), Map.of()));
        assertThrows(IllegalArgumentException.class, () -> new SyncPlanner(Duration.ZERO, null));
    }
}
