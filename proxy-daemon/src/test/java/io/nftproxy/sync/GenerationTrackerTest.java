package io.nftproxy.sync;

import io.nftproxy.TestClusters;
import io.nftproxy.netlink.monitor.CommitLedger;
import io.nftproxy.netlink.nft.FakeNftClient;
import io.nftproxy.net.IpFamily;
import io.nftproxy.nft.Transaction;
import io.nftproxy.render.Renderer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import static io.nftproxy.TestClusters.NODE;
import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The periodic verification's proof, against the in-memory kernel with a generation counter that behaves as the kernel's. */
class GenerationTrackerTest {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final Duration PERIOD = Duration.ofMinutes(10);

    /** The fake kernel, plus the namespace's generation: +1 per changing commit of ours, and of anyone else's. */
    private static final class Kernel {
        final FakeNftClient fake = new FakeNftClient();
        final AtomicLong generation = new AtomicLong(41);
        volatile boolean readable = true;
        /** What a monitor would have recorded; only commits made through {@link #commitElsewhere} and ours reach it. */
        final CommitLedger ledger = new CommitLedger();
        final io.nftproxy.netlink.nft.NftClient ours = new io.nftproxy.netlink.nft.NftClient() {
            @Override public void apply(Transaction tx) {
                fake.apply(tx);
                if (!tx.isEmpty()) ledger.committed(generation.incrementAndGet(), Set.of(tx.family()));
            }
            @Override public String listTableJson(IpFamily f) { return fake.listTableJson(f); }
            @Override public io.nftproxy.nft.TableContent readTable(IpFamily f) throws io.nftproxy.nft.UnrecognisedRuleException { return fake.readTable(f); }
            @Override public io.nftproxy.nft.Capabilities capabilities() { return fake.capabilities(); }
            @Override public String describe() { return "fake with a generation"; }
        };
        final GenerationTracker tracker = new GenerationTracker(ours, () -> {
            if (!readable) throw new java.io.IOException("EPERM");
            return generation.get();
        }, ledger);

        /** Someone else's commit, seen by the monitor, touching {@code ours} of our tables. */
        void commitElsewhere(IpFamily... ours) {
            ledger.committed(generation.incrementAndGet(), Set.of(ours));
        }
    }

    private static TestClusters web() {
        return cluster().service(svc("a", "web").clusterIP("172.30.0.1").port("http", "TCP", 80).build())
                .slice(slice("a", "web", "web-1").port("http", "TCP", 8080).ready("10.180.0.1", NODE).build());
    }

    private static ProxySync sync(Kernel k) { return new ProxySync(k.tracker, k.tracker::verify, Renderer.upstream(), PERIOD, Map.of()); }

    @Test
    void theTimerSkipsTheListingWhenNothingWasCommittedSinceOurLastCommit() {
        Kernel k = new Kernel();
        ProxySync s = sync(k);
        assertTrue(s.sync(web().snapshot(), TestClusters.node(), T0).success());
        long reads = k.fake.readCalls();
        ProxySync.Result r = s.sync(web().snapshot(), TestClusters.node(), T0.plus(PERIOD));
        assertTrue(r.success(), r::toString);
        assertTrue(r.plan().reasons().contains(SyncPlanner.Reason.TIMER));
        for (IpFamily f : IpFamily.values()) {
            assertTrue(r.plan().verified(f), r.plan().verifications().toString());
            assertFalse(r.plan().convergesOn(f));
        }
        assertEquals(reads, k.fake.readCalls(), "proven by the generation: no listing");
        // Our own commits (a change, then the next period) keep the proof.
        s.sync(web().service(svc("a", "db").clusterIP("172.30.0.2").port("sql", "TCP", 5432).build()).snapshot(), TestClusters.node(),
                T0.plus(PERIOD).plusSeconds(1));
        ProxySync.Result later = s.sync(web().service(svc("a", "db").clusterIP("172.30.0.2").port("sql", "TCP", 5432).build()).snapshot(),
                TestClusters.node(), T0.plus(PERIOD.multipliedBy(2)).plusSeconds(1));
        for (IpFamily f : IpFamily.values()) assertTrue(later.plan().verified(f), later.plan().verifications().toString());
        assertEquals(reads, k.fake.readCalls());
    }

    @Test
    void anyoneElsesCommitMakesTheTimerReadBackAndRepair() {
        Kernel k = new Kernel();
        ProxySync s = sync(k);
        s.sync(web().snapshot(), TestClusters.node(), T0);
        String chain = k.fake.dump(IpFamily.IPV4).chains().keySet().stream().filter(c -> c.startsWith("service-")).findFirst().orElseThrow();
        k.fake.flushChain(IpFamily.IPV4, chain);
        k.generation.incrementAndGet();
        ProxySync.Result r = s.sync(web().snapshot(), TestClusters.node(), T0.plus(PERIOD));
        assertTrue(r.success(), r::toString);
        for (IpFamily f : IpFamily.values()) {
            assertTrue(r.plan().convergesOn(f), "the generation moved: both families, ours or not, are read back");
            assertFalse(r.plan().verifications().get(f).unchanged());
        }
        assertTrue(r.plan().verifications().get(IpFamily.IPV4).detail().contains("moved from"), r.plan().verifications().toString());
        assertEquals(Renderer.upstream().render(web().snapshot(), TestClusters.node()).table(IpFamily.IPV4), k.fake.dump(IpFamily.IPV4),
                "the flushed chain is repaired");
        // After the repair the proof holds again.
        ProxySync.Result next = s.sync(web().snapshot(), TestClusters.node(), T0.plus(PERIOD.multipliedBy(2)));
        for (IpFamily f : IpFamily.values()) assertTrue(next.plan().verified(f), next.plan().verifications().toString());
    }

    @Test
    void othersCommitsToTheirOwnTablesSeenByTheMonitorKeepTheProof() {
        Kernel k = new Kernel();
        ProxySync s = sync(k);
        s.sync(web().snapshot(), TestClusters.node(), T0);
        long ours = k.generation.get();
        long reads = k.fake.readCalls();
        k.commitElsewhere();            // a CNI plugin's table, twice
        k.commitElsewhere();
        ProxySync.Result r = s.sync(web().snapshot(), TestClusters.node(), T0.plus(PERIOD));
        for (IpFamily f : IpFamily.values()) {
            GenerationTracker.Verification v = r.plan().verifications().get(f);
            assertTrue(v.unchanged(), v::toString);
            assertEquals("monitor", v.path());
            assertEquals(ours, v.trusted());
            assertTrue(v.toString().contains("the nftables monitor saw every commit up to " + (ours + 2)), v::toString);
        }
        assertEquals(reads, k.fake.readCalls(), "no listing");

        // The trust moved on: our next commit, after one more of theirs, is again the only one since.
        k.commitElsewhere();
        s.sync(web().service(svc("a", "db").clusterIP("172.30.0.2").port("sql", "TCP", 5432).build()).snapshot(), TestClusters.node(),
                T0.plus(PERIOD).plusSeconds(1));
        GenerationTracker.Verification v = k.tracker.verify(IpFamily.IPV4);
        assertTrue(v.unchanged(), v::toString);
        assertEquals("generation", v.path());
    }

    @Test
    void aCommitTheMonitorSawTouchOurTableIsReadBackForThatFamilyOnly() {
        Kernel k = new Kernel();
        ProxySync s = sync(k);
        s.sync(web().snapshot(), TestClusters.node(), T0);
        k.commitElsewhere();
        k.commitElsewhere(IpFamily.IPV6);
        ProxySync.Result r = s.sync(web().snapshot(), TestClusters.node(), T0.plus(PERIOD));
        assertTrue(r.plan().verified(IpFamily.IPV4), r.plan().verifications().toString());
        assertTrue(r.plan().convergesOn(IpFamily.IPV6), r.plan().verifications().toString());
        assertEquals("read_back", r.plan().verifications().get(IpFamily.IPV6).path());
    }

    @Test
    void aCommitTheMonitorDidNotSeeProvesNothing() {
        Kernel k = new Kernel();
        ProxySync s = sync(k);
        s.sync(web().snapshot(), TestClusters.node(), T0);
        k.commitElsewhere();
        k.ledger.lost();                  // an overflow, say
        k.commitElsewhere();
        ProxySync.Result r = s.sync(web().snapshot(), TestClusters.node(), T0.plus(PERIOD));
        for (IpFamily f : IpFamily.values()) assertTrue(r.plan().convergesOn(f), r.plan().verifications().toString());
        assertTrue(r.plan().verifications().get(IpFamily.IPV4).detail().contains("cannot vouch"), r.plan().verifications().toString());
    }

    @Test
    void aCommitThatMovedTheGenerationByMoreThanOneProvesNothing() {
        Kernel k = new Kernel();
        ProxySync s = sync(k);
        s.sync(web().snapshot(), TestClusters.node(), T0);
        // Someone commits between the listing of the first sync and... here, between two of our commits.
        k.generation.incrementAndGet();
        s.sync(web().service(svc("a", "db").clusterIP("172.30.0.2").port("sql", "TCP", 5432).build()).snapshot(), TestClusters.node(), T0.plusSeconds(1));
        ProxySync.Result r = s.sync(web().snapshot(), TestClusters.node(), T0.plus(PERIOD));
        for (IpFamily f : IpFamily.values()) assertTrue(r.plan().convergesOn(f), r.plan().verifications().toString());
    }

    @Test
    void anUnreadableGenerationReadsBack() {
        Kernel k = new Kernel();
        ProxySync s = sync(k);
        s.sync(web().snapshot(), TestClusters.node(), T0);
        k.readable = false;
        ProxySync.Result r = s.sync(web().snapshot(), TestClusters.node(), T0.plus(PERIOD));
        assertTrue(r.success());
        assertTrue(r.plan().convergesOn(IpFamily.IPV4));
        assertTrue(r.plan().verifications().get(IpFamily.IPV4).detail().contains("EPERM"), r.plan().verifications().toString());
    }

    @Test
    void aRefusedCommitThatLeftTheGenerationAloneKeepsTheOtherFamilysProof() {
        Kernel k = new Kernel();
        ProxySync s = sync(k);
        s.sync(web().snapshot(), TestClusters.node(), T0);
        k.fake.failWhen(tx -> tx.family() == IpFamily.IPV6);
        assertThrows(RuntimeException.class, () -> k.tracker.apply(new Transaction(IpFamily.IPV6).add(
                k.fake.dump(IpFamily.IPV6).chains().values().iterator().next())));
        assertTrue(k.tracker.verify(IpFamily.IPV4).unchanged());
    }

    @Test
    void theGenerationAfterTheLastSkipsZero() {
        assertEquals(1, CommitLedger.next(0xffff_ffffL));
        assertEquals(8, CommitLedger.next(7));
    }
}
