package io.nftproxy.it;

import io.nftproxy.TestClusters;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.nft.LibNftablesClient;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Value;
import io.nftproxy.readback.TableComparison;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import io.nftproxy.sync.KernelTable;
import io.nftproxy.sync.SyncResult;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Set;

import static io.nftproxy.TestClusters.NODE;
import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A cold start of 10k services × 2 endpoints (fast layout) over the command budget, in the real kernel: it is
 * committed as several transactions and ends in the same table as the unsplit cold start; a part the kernel refuses
 * leaves the earlier parts in place, and the next converge completes the table from what it reads back.
 */
class ColdStartPartsKernelTest {
    private static final Set<TableComparison.Tolerance> JSON_GAPS = Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED);
    private static final IpFamily V4 = IpFamily.IPV4;
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final int SERVICES = 10_000;
    private static final int BUDGET = 5_000;

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailable();
    }

    private static TableContent table() {
        TestClusters c = cluster();
        for (int i = 0; i < SERVICES; i++) {
            String name = "s" + i;
            c = c.service(svc("a", name).clusterIP("172.30." + (i / 250) + "." + (i % 250 + 1)).port("http", "TCP", 80).build())
                    .slice(slice("a", name, name + "-1").port("http", "TCP", 8080)
                            .ready("10.180." + (i / 250) + "." + (i % 250 + 1), NODE).ready("10.181." + (i / 250) + "." + (i % 250 + 1), NODE).build());
        }
        return new Renderer(TableLayout.FAST).render(c.snapshot(), TestClusters.node()).table(V4);
    }

    @Test
    void aLargeColdStartIsCommittedInPartsAndEndsInTheUnsplitTable() throws Exception {
        TableContent want = table();
        TableContent split;
        try (KernelNamespace ns = KernelNamespace.create("csp"); NftClient client = LibNftablesClient.inNamespace(ns.handle())) {
            SyncResult r = new KernelTable(V4, client, BUDGET).converge(want, T0);
            assertTrue(r.success(), r::toString);
            assertTrue(r.parts() >= 5, () -> "expected several transactions, got " + r);
            split = client.readTable(V4);
        }
        TableContent whole;
        try (KernelNamespace ns = KernelNamespace.create("csw"); NftClient client = LibNftablesClient.inNamespace(ns.handle())) {
            SyncResult r = new KernelTable(V4, client, Integer.MAX_VALUE).converge(want, T0);
            assertTrue(r.success(), r::toString);
            assertEquals(1, r.parts(), r::toString);
            whole = client.readTable(V4);
        }
        assertEquals(List.of(), TableComparison.diff(whole, split), "split cold start against the unsplit one");
        assertEquals(List.of(), TableComparison.diff(want, split, JSON_GAPS), "split cold start against the model");
    }

    @Test
    void aPartTheKernelRefusesLeavesTheEarlierOnesAndTheNextConvergeCompletesTheTable() throws Exception {
        TableContent want = table();
        try (KernelNamespace ns = KernelNamespace.create("csf"); LibNftablesClient real = LibNftablesClient.inNamespace(ns.handle())) {
            RefusingPart refusing = new RefusingPart(real, 4);
            KernelTable k = new KernelTable(V4, refusing, BUDGET);
            SyncResult failed = k.converge(want, T0);
            assertFalse(failed.success(), failed::toString);
            assertEquals(3, failed.parts(), failed::toString);
            TableContent half = real.readTable(V4);
            assertTrue(half != null && !TableComparison.diff(want, half, JSON_GAPS).isEmpty(), "parts 1-3 only");
            assertEquals(half.sets().keySet(), want.sets().keySet(), "the first parts created every set");

            SyncResult again = k.converge(want, T0.plusSeconds(1));
            assertTrue(again.success(), again::toString);
            assertTrue(again.commands() < failed.commands(), () -> "the converge sent only what was missing: " + again);
            assertEquals(List.of(), TableComparison.diff(want, real.readTable(V4), JSON_GAPS));
        }
    }

    /**
     * Sends every transaction to the kernel, but makes the kernel refuse the n-th: it gets a delete of an element
     * that does not exist appended, so the kernel rolls that whole transaction back (a real refusal, not a fake).
     */
    private static final class RefusingPart implements NftClient {
        private final NftClient kernel;
        private final int refused;
        private int calls;

        RefusingPart(NftClient kernel, int refused) {
            this.kernel = kernel;
            this.refused = refused;
        }

        @Override public void apply(Transaction tx) {
            if (++calls != refused) {
                kernel.apply(tx);
                return;
            }
            Transaction doomed = new Transaction(tx.family());
            tx.commands().forEach(c -> doomed.command(c.verb(), c.object()));
            doomed.delete(new Element("cluster-ips", List.of(new Value.Addr(IpAddress.parse("192.0.2.254"))), null, null));
            kernel.apply(doomed);
        }

        @Override public String listTableJson(IpFamily family) { return kernel.listTableJson(family); }

        @Override public Capabilities capabilities() { return kernel.capabilities(); }

        @Override public String describe() { return "refusing transaction " + refused + " of " + kernel.describe(); }

        @Override public void close() { kernel.close(); }
    }
}
