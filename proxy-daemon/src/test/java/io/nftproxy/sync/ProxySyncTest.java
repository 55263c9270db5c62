package io.nftproxy.sync;

import io.nftproxy.TestClusters;
import io.nftproxy.netlink.nft.FakeNftClient;
import io.nftproxy.proxy.IpAddress;
import io.nftproxy.proxy.IpFamily;
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
    void aChangedNodeMakesBothSyncsFull() {
        FakeNftClient fake = new FakeNftClient();
        ProxySync sync = new ProxySync(fake);
        sync.sync(cluster1().snapshot(), TestClusters.node(), T0);
        NodeContext moved = TestClusters.node().withLocalAddresses(List.of(IpAddress.parse("192.168.10.20"), IpAddress.parse("192.168.10.21")));
        ProxySync.Result r = sync.sync(cluster1().snapshot(), moved, T0.plusSeconds(1));
        for (IpFamily f : IpFamily.values()) assertTrue(r.families().get(f).full(), f.toString());
        assertEquals(Renderer.upstream().render(cluster1().snapshot(), moved).table(IpFamily.IPV4), fake.dump(IpFamily.IPV4));
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
        if (!third.diagnostics().equals(first.diagnostics())) assertFalse(third.logged().isEmpty(), "a new reason is logged");

        sync.sync(cluster1().snapshot(), TestClusters.node(), T0.plusSeconds(3));
        ProxySync.Result broke = sync.sync(broken.snapshot(), TestClusters.node(), T0.plusSeconds(4));
        assertEquals(broke.diagnostics(), broke.logged(), "fixed, then broken again: logged again");
    }
}
