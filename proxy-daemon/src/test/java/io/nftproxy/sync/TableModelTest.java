package io.nftproxy.sync;

import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;

import io.nftproxy.RandomClusters;
import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.diff.Differ;
import io.nftproxy.nft.Command;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.InMemoryTables;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ProxyStateBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;

import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TableModelTest {
    private static ProxyState state(ClusterSnapshot s) { return ProxyStateBuilder.build(s, IpFamily.IPV4, TestClusters.NODE); }

    /**
     * Both paths drive their own model kernel; after every step the tables and the kernels must be identical. In
     * both layouts: the fast one changes a policy chain's rule count with its endpoint count.
     */
    @ParameterizedTest
    @EnumSource(TableLayout.class)
    void randomWalkMatchesTheFullRenderAndDiff(TableLayout layout) {
        long seed = Long.getLong("incremental.seed", System.nanoTime());
        RandomClusters walk = new RandomClusters(seed);
        Renderer renderer = new Renderer(layout);
        InMemoryTables fullKernel = new InMemoryTables();
        InMemoryTables incKernel = new InMemoryTables();
        TableModel inc = new TableModel(renderer, IpFamily.IPV4, TestClusters.node());
        TableContent applied = null;
        NodeContext node = TestClusters.node();
        String last = "start";
        try {
            for (int i = 0; i < 600; i++) {
                last = walk.step();
                boolean nodeMoved = i % 97 == 96;
                if (nodeMoved) {
                    node = node.withLocalAddresses(List.of(IpAddress.parse("192.168.10.20"), IpAddress.parse("192.168.10." + (30 + i % 50))));
                    last += " + node addresses";
                }
                ProxyState st = state(walk.snapshot());
                Renderer.Table want = renderer.render(st, node);
                Differ.Diff full = Differ.diff(applied, want.table());
                fullKernel.apply(full.transaction());
                fullKernel.apply(io.nftproxy.diff.CommittedTables.deleteChains(Differ.committed(want.table(), full.staleChains()), full.staleChains()));
                applied = want.table();

                Differ.Diff d = nodeMoved ? inc.rerender(st, node) : inc.sync(st, node);
                incKernel.apply(d.transaction());
                incKernel.apply(Differ.deletingChains(IpFamily.IPV4, d.staleChains()));

                Renderer.Table got = inc.table();
                assertEquals(want.table(), got.table(), "table at step " + i + " (" + last + ")");
                assertEquals(want.noLocalInternal(), got.noLocalInternal(), "counter at step " + i);
                assertEquals(want.noLocalExternal(), got.noLocalExternal(), "counter at step " + i);
                assertEquals(fullKernel.dump(IpFamily.IPV4), incKernel.dump(IpFamily.IPV4), "kernel at step " + i + " (" + last + ")");
                assertEquals(want.table(), incKernel.dump(IpFamily.IPV4), "kernel matches desired at step " + i);
                assertTrue(inc.sync(st, node).isEmpty(), "a repeated sync sends nothing, step " + i);
            }
        } catch (AssertionError e) {
            throw new AssertionError(layout + " seed " + seed + " (-Dincremental.seed=" + seed + "), last change: " + last, e);
        }
    }

    /** A change to one service at 2000 services sends that service's objects only, whatever the table's size. */
    @Test
    void oneChangeSendsOnlyThatServicesObjects() {
        TestClusters c = cluster();
        for (int i = 0; i < 2000; i++) {
            c.service(svc("ns", "s" + i).clusterIP("172.30." + (i / 250) + "." + (i % 250 + 1)).port("http", "TCP", 80).build());
            c.slice(slice("ns", "s" + i, "s" + i + "-a").port("http", "TCP", 8080)
                    .ready("10.1." + (i / 250) + "." + (i % 250 + 1), TestClusters.OTHER_NODE).build());
        }
        TableModel inc = new TableModel(Renderer.upstream(), IpFamily.IPV4, TestClusters.node());
        assertTrue(inc.sync(state(c.snapshot()), TestClusters.node()).transaction().size() > 4000);
        c.slice(slice("ns", "s7", "s7-b").port("http", "TCP", 8080).ready("10.2.0.1", TestClusters.OTHER_NODE).build());
        Differ.Diff d = inc.sync(state(c.snapshot()), TestClusters.node());
        List<String> cmds = d.transaction().commands().stream().map(Command::toString).toList();
        // flush the service chain, add its rule back; nothing else changed (the dispatch element is the same).
        assertEquals(2, d.transaction().size(), String.join("\n", cmds));
    }

    /**
     * Two services claim NodePort 30080: the table keeps the first's element. Removing it hands the element to the
     * other, whose chains the incremental diff never re-rendered.
     */
    @Test
    void aSharedElementPassesToTheNextOwner() {
        TestClusters both = cluster();
        TestClusters onlyB = cluster();
        for (String n : List.of("a", "b")) {
            var s = svc("ns", n).type("NodePort").clusterIP(n.equals("a") ? "172.30.0.1" : "172.30.0.2").port("http", "TCP", 80, 30080).build();
            var sl = slice("ns", n, n + "-1").port("http", "TCP", 8080).ready(n.equals("a") ? "10.1.0.1" : "10.1.0.2", TestClusters.OTHER_NODE).build();
            both.service(s).slice(sl);
            if (n.equals("b")) onlyB.service(s).slice(sl);
        }
        Renderer r = Renderer.upstream();
        TableModel inc = new TableModel(r, IpFamily.IPV4, TestClusters.node());
        InMemoryTables kernel = new InMemoryTables();
        for (ClusterSnapshot snap : List.of(both.snapshot(), onlyB.snapshot(), both.snapshot())) {
            Differ.Diff d = inc.sync(state(snap), TestClusters.node());
            kernel.apply(d.transaction());
            kernel.apply(Differ.deletingChains(IpFamily.IPV4, d.staleChains()));
            assertEquals(r.render(state(snap), TestClusters.node()).table(), kernel.dump(IpFamily.IPV4));
        }
    }
}
