package io.nftproxy.sync;

import io.nftproxy.TestClusters;
import io.nftproxy.netlink.nft.FakeNftClient;
import io.nftproxy.proxy.IpAddress;
import io.nftproxy.proxy.IpFamily;
import io.nftproxy.proxy.IpPrefix;
import io.nftproxy.proxy.NodeContext;
import io.nftproxy.render.Renderer;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

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
        ProxySync sync = new ProxySync(fake);
        ProxySync.Result r = sync.sync(cluster1().snapshot(), TestClusters.node(), T0);
        assertTrue(r.success(), r::toString);
        Renderer.Rendering want = Renderer.upstream().render(cluster1().snapshot(), TestClusters.node());
        for (IpFamily f : IpFamily.values()) {
            assertEquals(want.table(f), fake.dump(f), f.toString());
            assertTrue(r.families().get(f).full());
        }
        ProxySync.Result again = sync.sync(cluster1().snapshot(), TestClusters.node(), T0.plusSeconds(1));
        for (IpFamily f : IpFamily.values()) assertFalse(again.families().get(f).full());
    }

    @Test
    void aChangedNodeRerendersEverythingAndSendsTheDifferenceWithoutReadingTheKernel() {
        FakeNftClient fake = new FakeNftClient();
        ProxySync sync = new ProxySync(fake);
        TestClusters withNodePort = cluster1().service(svc("a", "np").type("NodePort").clusterIP("172.30.0.9").port("http", "TCP", 80, 30080).build());
        sync.sync(withNodePort.snapshot(), TestClusters.node(), T0);
        long reads = fake.readCalls();
        NodeContext n = TestClusters.node();
        NodeContext moved = new NodeContext(n.nodeName(), n.zone(), List.of(IpAddress.parse("192.168.10.30"), IpAddress.parse("fd00:192:168:10::30")),
                n.clusterCidrs(), List.of(IpPrefix.parse("192.168.10.30/32"), IpPrefix.parse("fd00:192:168:10::30/128")),
                List.of(IpAddress.parse("192.168.10.30"), IpAddress.parse("fd00:192:168:10::30")), false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
        ProxySync.Result r = sync.sync(ClusterView.of(withNodePort.snapshot()), ServiceChanges.NONE, moved, T0.plusSeconds(1));
        assertTrue(r.success(), r::toString);
        assertTrue(r.everything());
        assertEquals(java.util.Set.of(SyncPlanner.Reason.NODE_CHANGED), r.plan().reasons());
        for (IpFamily f : IpFamily.values()) assertFalse(r.families().get(f).full(), f.toString());
        assertEquals(reads, fake.readCalls(), "the model is what the kernel holds; nothing to read back");
        assertTrue(r.families().get(IpFamily.IPV4).commands() > 0, "the node-port addresses changed");
        for (IpFamily f : IpFamily.values()) assertEquals(Renderer.upstream().render(withNodePort.snapshot(), moved).table(f), fake.dump(f));
    }

    @Test
    void aDiagnosticIsLoggedOncePerObjectAndReasonUntilItChanges() {
        FakeNftClient fake = new FakeNftClient();
        ProxySync sync = new ProxySync(fake);
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
}
