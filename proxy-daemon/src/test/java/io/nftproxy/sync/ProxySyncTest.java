package io.nftproxy.sync;

import io.nftproxy.source.ClusterView;
import io.nftproxy.source.ServiceChanges;

import io.nftproxy.TestClusters;
import io.nftproxy.netlink.nft.FakeNftClient;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.NodeContext;
import io.nftproxy.render.Renderer;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.service.Diagnostic;
import io.nftproxy.source.ClusterStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static io.nftproxy.TestClusters.NODE;
import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProxySyncTest {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");

    private static TestClusters cluster1() {
        return cluster().service(svc("a", "web").clusterIP("172.30.0.1").port("http", "TCP", 80).build())
                .slice(slice("a", "web", "web-1").port("http", "TCP", 8080).ready("10.180.0.1", NODE).build());
    }

    @Test
    void syncsBothFamiliesToTheRenderedTables() {
        FakeNftClient fake = new FakeNftClient();
        ProxySync sync = new ProxySync(fake, null, Renderer.upstream(), Duration.ofHours(1), Map.of());
        ProxySync.Result r = sync.sync(cluster1().snapshot(), TestClusters.node(), T0);
        assertTrue(r.success(), r::toString);
        Renderer.Rendering want = Renderer.upstream().render(cluster1().snapshot(), TestClusters.node());
        for (IpFamily f : IpFamily.values()) {
            assertEquals(want.table(f), fake.dump(f), f.toString());
            assertEquals(SyncLevel.CONVERGE, r.families().get(f).level());
        }
        ProxySync.Result again = sync.sync(cluster1().snapshot(), TestClusters.node(), T0.plusSeconds(1));
        // A snapshot is the whole cluster handed over again: a rebuild, the kernel is not read.
        for (IpFamily f : IpFamily.values()) assertEquals(SyncLevel.REBUILD, again.families().get(f).level());
    }

    @Test
    void aChangedNodeRerendersEverythingAndSendsTheDifferenceWithoutReadingTheKernel() {
        FakeNftClient fake = new FakeNftClient();
        ProxySync sync = new ProxySync(fake, null, Renderer.upstream(), Duration.ofHours(1), Map.of());
        TestClusters withNodePort = cluster1().service(svc("a", "np").type("NodePort").clusterIP("172.30.0.9").port("http", "TCP", 80, 30080).build());
        sync.sync(withNodePort.snapshot(), TestClusters.node(), T0);
        long reads = fake.readCalls();
        NodeContext n = TestClusters.node();
        NodeContext moved = new NodeContext(n.nodeName(), n.zone(), List.of(IpAddress.parse("192.168.10.30"), IpAddress.parse("fd00:192:168:10::30")),
                n.clusterCidrs(), List.of(IpPrefix.parse("192.168.10.30/32"), IpPrefix.parse("fd00:192:168:10::30/128")),
                List.of(IpAddress.parse("192.168.10.30"), IpAddress.parse("fd00:192:168:10::30")), false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
        ProxySync.Result r = sync.sync(ClusterView.of(withNodePort.snapshot()), ServiceChanges.NONE, moved, T0.plusSeconds(1));
        assertTrue(r.success(), r::toString);
        assertTrue(r.level().wholeCluster());
        assertEquals(java.util.Set.of(SyncPlanner.Reason.NODE_CONTEXT), r.plan().reasons());
        for (IpFamily f : IpFamily.values()) assertEquals(SyncLevel.REBUILD, r.families().get(f).level(), f.toString());
        assertEquals(reads, fake.readCalls(), "the model is what the kernel holds; nothing to read back");
        assertTrue(r.families().get(IpFamily.IPV4).commands() > 0, "the node-port addresses changed");
        for (IpFamily f : IpFamily.values()) assertEquals(Renderer.upstream().render(withNodePort.snapshot(), moved).table(f), fake.dump(f));
    }

    /** issue 26: a Node object change is a rebuild for the reason "the Node changed", and sends nothing it did not move. */
    @Test
    void aNodeObjectChangeIsARebuildForThatReason() {
        FakeNftClient fake = new FakeNftClient();
        ProxySync sync = new ProxySync(fake, null, Renderer.upstream(), Duration.ofHours(1), Map.of());
        sync.sync(cluster1().snapshot(), TestClusters.node(), T0);
        long reads = fake.readCalls();
        ProxySync.Result r = sync.sync(ClusterView.of(cluster1().snapshot()),
                new ServiceChanges(java.util.Set.of(ServiceChanges.Wide.NODE), java.util.Set.of()), TestClusters.node(), T0.plusSeconds(1));
        assertTrue(r.success(), r::toString);
        assertEquals(SyncLevel.REBUILD, r.level());
        assertEquals(java.util.Set.of(SyncPlanner.Reason.NODE), r.plan().reasons());
        assertEquals("the Node object changed", SyncPlanner.Reason.NODE.toString());
        for (IpFamily f : IpFamily.values()) {
            assertEquals(SyncLevel.REBUILD, r.families().get(f).level());
            assertEquals(0, r.families().get(f).commands(), "the node context did not move: nothing to send");
        }
        assertEquals(reads, fake.readCalls());
    }

    @Test
    void aDiagnosticIsLoggedOncePerObjectAndReasonUntilItChanges() {
        FakeNftClient fake = new FakeNftClient();
        ProxySync sync = new ProxySync(fake, null, Renderer.upstream(), Duration.ofHours(1), Map.of());
        TestClusters broken = cluster1().service(svc("a", "bad").clusterIP("300.1.2.3").port("http", "TCP", 80).build());
        ProxySync.Result first = sync.sync(broken.snapshot(), TestClusters.node(), T0);
        assertFalse(first.diagnostics().isEmpty(), "the bad ClusterIP must be reported");
        assertEquals(first.diagnostics(), first.logged());
        ProxySync.Result second = sync.sync(broken.snapshot(), TestClusters.node(), T0.plusSeconds(1));
        assertEquals(first.diagnostics(), second.diagnostics());
        assertTrue(second.logged().isEmpty(), () -> "logged again: " + second.logged());

        TestClusters otherReason = cluster1().service(svc("a", "bad").clusterIP("not-an-ip").port("http", "TCP", 80).build());
        ProxySync.Result third = sync.sync(otherReason.snapshot(), TestClusters.node(), T0.plusSeconds(2));
        assertNotEquals(first.diagnostics(), third.diagnostics(), "the two bad ClusterIPs must be reported differently");
        assertEquals(third.diagnostics(), third.logged(), "a new reason is logged");

        sync.sync(cluster1().snapshot(), TestClusters.node(), T0.plusSeconds(3));
        ProxySync.Result broke = sync.sync(broken.snapshot(), TestClusters.node(), T0.plusSeconds(4));
        assertEquals(broke.diagnostics(), broke.logged(), "fixed, then broken again: logged again");
    }

    private static String nodePortLines(FakeNftClient fake, String port) {
        String script = Transaction.creating(fake.dump(IpFamily.IPV4)).script(Capabilities.baseline());
        return String.join("\n", script.lines().filter(l -> l.contains("nodeports {") && l.contains(port)).toList());
    }

    @Test
    void aNodePortFreedByAPartialSyncGoesToTheServiceThatLostIt() {
        FakeNftClient fake = new FakeNftClient();
        ProxySync sync = new ProxySync(fake, null, Renderer.upstream(), Duration.ofHours(1), Map.of(10256, "healthz server"));
        ClusterStore store = new ClusterStore();
        store.servicesListed();
        store.endpointSlicesListed();
        var old = svc("a", "old").type("NodePort").clusterIP("172.30.0.1").port("", "TCP", 80, 30050)
                .created("2024-01-01T00:00:00Z").build();
        var young = svc("a", "young").type("NodePort").clusterIP("172.30.0.2").port("", "TCP", 80, 30050)
                .created("2025-01-01T00:00:00Z").build();
        var ownPort = svc("a", "own").type("NodePort").clusterIP("172.30.0.3").port("", "TCP", 80, 10256).build();
        store.upsertService(young);
        store.upsertService(ownPort);
        ProxySync.Result first = sync.sync(store, store.drainChanges(), TestClusters.node(), T0);
        assertTrue(nodePortLines(fake, "tcp . 30050").contains("a/young"), "alone, young has it");
        assertEquals("", nodePortLines(fake, "tcp . 10256"), "never a nodePort on our own healthz port");
        assertTrue(first.logged().stream().map(Diagnostic::toString).anyMatch(d -> d.contains("a/own") && d.contains("healthz server")),
                first.logged()::toString);

        store.upsertService(old);
        ProxySync.Result second = sync.sync(store, store.drainChanges(), TestClusters.node(), T0.plusSeconds(1));
        assertFalse(second.level().wholeCluster(), "a partial sync");
        String lines = nodePortLines(fake, "tcp . 30050");
        assertTrue(lines.contains("a/old") && !lines.contains("a/young"), lines);
        assertEquals(1, second.logged().size(), second.logged()::toString);
        String warning = second.logged().get(0).toString();
        assertTrue(warning.contains("object=\"a/young\"") && warning.contains("a/old"), "names both Services: " + warning);

        store.deleteService(old.meta());
        sync.sync(store, store.drainChanges(), TestClusters.node(), T0.plusSeconds(2));
        assertTrue(nodePortLines(fake, "tcp . 30050").contains("a/young"), "the port goes back once it is free");
    }

    @Test
    void refusedOverlapsFollowAPartialSyncThatMakesAnAddressSomeoneElsesClusterIP() {
        FakeNftClient fake = new FakeNftClient();
        ProxySync sync = new ProxySync(fake, null, Renderer.upstream().refusingAddressOverlaps(), Duration.ofHours(1), Map.of());
        ClusterStore store = new ClusterStore();
        store.servicesListed();
        store.endpointSlicesListed();
        store.upsertService(svc("a", "thief").clusterIP("172.30.0.2").port("", "TCP", 80).externalIP("172.30.0.1").build());
        sync.sync(store, store.drainChanges(), TestClusters.node(), T0);
        assertTrue(serviceIpLines(fake, "172.30.0.1 . tcp . 80").contains("a/thief"), () -> Transaction.creating(fake.dump(IpFamily.IPV4)).script(Capabilities.baseline()));

        store.upsertService(svc("a", "victim").clusterIP("172.30.0.1").port("", "TCP", 80).build());
        ProxySync.Result second = sync.sync(store, store.drainChanges(), TestClusters.node(), T0.plusSeconds(1));
        assertFalse(second.level().wholeCluster(), "a partial sync");
        String lines = serviceIpLines(fake, "172.30.0.1 . tcp . 80");
        assertTrue(lines.contains("a/victim") && !lines.contains("a/thief"), "the victim's address is its own again: " + lines);
        assertTrue(second.logged().stream().anyMatch(d -> !d.kept() && d.object().equals("a/thief")
                && d.reason().contains("ClusterIP of Service a/victim") && d.reason().contains("skipped")), second.logged()::toString);
    }

    /** The map elements keyed by {@code key}: service-ips, or no-endpoint-services for a Service without endpoints. */
    private static String serviceIpLines(FakeNftClient fake, String key) {
        String script = Transaction.creating(fake.dump(IpFamily.IPV4)).script(Capabilities.baseline());
        return String.join("\n", script.lines().filter(l -> l.startsWith("add element") && l.contains(key)).toList());
    }
}
