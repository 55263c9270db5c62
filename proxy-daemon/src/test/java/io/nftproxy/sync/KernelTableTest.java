package io.nftproxy.sync;

import io.nftproxy.RandomClusters;
import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.diff.Differ;
import io.nftproxy.netlink.nft.FakeNftClient;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.nft.Chain;
import io.nftproxy.nft.Command;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.TableSpec;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Verb;
import io.nftproxy.net.IpFamily;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static io.nftproxy.TestClusters.NODE;
import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link KernelTable} against the fake kernel: commits of ready diffs, convergence by read-back, stale chains and
 * failures. Which of the two a sync does is {@link SyncPlanner}'s decision; these tests make it themselves.
 */
class KernelTableTest {
    private static final IpFamily V4 = IpFamily.IPV4;
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");

    private final FakeNftClient fake = new FakeNftClient();

    private static TableContent render(ClusterSnapshot s) {
        return Renderer.upstream().render(s, TestClusters.node()).table(V4);
    }

    private static TestClusters base() {
        return cluster().service(svc("a", "web").clusterIP("172.30.0.1").port("http", "TCP", 80).build())
                .slice(slice("a", "web", "web-1").port("http", "TCP", 8080).ready("10.180.0.1", NODE).ready("10.180.0.2", NODE).build());
    }

    private static TestClusters withDb() {
        return base().service(svc("a", "db").clusterIP("172.30.0.2").port("pg", "TCP", 5432).build())
                .slice(slice("a", "db", "db-1").port("pg", "TCP", 5432).ready("10.180.0.3", NODE).build());
    }

    /** What the kernel must hold after a successful sync: the model, plus the flushed chains awaiting deletion. */
    private static void assertKernelIsModel(FakeNftClient fake, KernelTable k, TableContent desired, String why) {
        TableContent want = Differ.committed(desired, k.staleChains());
        assertEquals(want, fake.dump(desired.family()), why);
    }

    @Test
    void convergingOnAnEmptyKernelCreatesTheTable() {
        KernelTable k = new KernelTable(V4, fake);
        TableContent want = render(base().snapshot());
        SyncResult r = k.converge(want, T0);
        assertTrue(r.success(), r::toString);
        assertTrue(r.level() == SyncLevel.CONVERGE);
        assertEquals(Differ.diff(null, want).transaction().size(), r.commands());
        assertEquals(want, fake.dump(V4));
    }

    @Test
    void anEmptyDiffNeverReachesTheKernel() {
        KernelTable k = new KernelTable(V4, fake);
        TableContent want = render(base().snapshot());
        k.converge(want, T0);
        long calls = fake.applyCalls();
        SyncResult r = k.commit(Differ.diff(want, render(base().snapshot())), SyncLevel.PARTIAL, T0.plusSeconds(1));
        assertTrue(r.success());
        assertFalse(r.level() == SyncLevel.CONVERGE);
        assertEquals(0, r.commands());
        assertEquals(calls, fake.applyCalls(), "an empty diff must not reach the kernel");
    }

    @Test
    void removedServicesChainsAreDeletedAfterTheGraceInATransactionOfTheirOwn() {
        KernelTable k = new KernelTable(V4, fake);
        TableContent before = render(base().snapshot());
        TableContent after = render(withDb().snapshot());
        k.converge(before, T0);

        SyncResult add = k.commit(Differ.diff(before, after), SyncLevel.PARTIAL, T0.plusSeconds(1));
        assertTrue(add.success());
        List<Command> sent = fake.lastTransaction().commands();
        for (Command c : sent) {
            assertEquals(Verb.ADD, c.verb(), c::toString);
            assertTrue(mentions(c, "db"), () -> "not the db service's object: " + c);
        }
        assertEquals(after, fake.dump(V4));
        assertTrue(k.nextStaleChainDeadline().isEmpty());

        Instant removed = T0.plusSeconds(2);
        SyncResult remove = k.commit(Differ.diff(after, before), SyncLevel.PARTIAL, removed);
        assertTrue(remove.success());
        for (Command c : fake.lastTransaction().commands()) assertTrue(mentions(c, "db"), () -> "not the db service's object: " + c);
        assertFalse(k.staleChains().isEmpty(), "the removed service's chains wait, flushed, for a later delete");
        assertEquals(removed.plus(KernelTable.STALE_CHAIN_GRACE), k.nextStaleChainDeadline().orElseThrow());
        assertKernelIsModel(fake, k, before, "after removal");

        Differ.Diff nothing = Differ.diff(before, before);
        assertEquals(0, k.commit(nothing, SyncLevel.PARTIAL, removed.plusMillis(500)).staleChainsDeleted(), "within the grace the chains stay");
        SyncResult late = k.commit(nothing, SyncLevel.PARTIAL, removed.plus(KernelTable.STALE_CHAIN_GRACE));
        assertTrue(late.staleChainsDeleted() > 0);
        assertEquals(0, late.commands());
        assertTrue(k.staleChains().isEmpty());
        assertTrue(k.nextStaleChainDeadline().isEmpty());
        assertEquals(before, fake.dump(V4));
    }

    /** A flush stamped before the wall clock stepped back an hour must not keep its chains for that hour. */
    @Test
    void chainsFlushedBeforeTheClockSteppedBackAreDeletedAtTheNextCommit() {
        KernelTable k = new KernelTable(V4, fake);
        TableContent before = render(base().snapshot());
        TableContent after = render(withDb().snapshot());
        k.converge(after, T0);
        Instant removed = T0.plusSeconds(2);
        k.commit(Differ.diff(after, before), SyncLevel.PARTIAL, removed);
        assertFalse(k.staleChains().isEmpty());

        Instant steppedBack = removed.minus(java.time.Duration.ofHours(1));
        SyncResult next = k.commit(Differ.diff(before, before), SyncLevel.PARTIAL, steppedBack);
        assertTrue(next.staleChainsDeleted() > 0, "the chains flushed before the step are deleted");
        assertTrue(k.staleChains().isEmpty());
        assertEquals(before, fake.dump(V4));
    }

    @Test
    void aChainThatComesBackWithinTheGraceIsNotDeleted() {
        KernelTable k = new KernelTable(V4, fake);
        TableContent before = render(base().snapshot());
        TableContent after = render(withDb().snapshot());
        k.converge(after, T0);
        k.commit(Differ.diff(after, before), SyncLevel.PARTIAL, T0.plusSeconds(1));
        assertFalse(k.staleChains().isEmpty());
        k.commit(Differ.diff(before, after), SyncLevel.PARTIAL, T0.plusMillis(1500));
        assertTrue(k.staleChains().isEmpty(), "the chains are in use again: " + k.staleChains());
        SyncResult r = k.commit(Differ.diff(after, after), SyncLevel.PARTIAL, T0.plusSeconds(5));
        assertTrue(r.success(), r::toString);
        assertEquals(0, r.staleChainsDeleted());
        assertEquals(after, fake.dump(V4));
    }

    @Test
    void convergingTakesStaleChainsFromTheKernelAndKeepsTheirAge() {
        KernelTable k = new KernelTable(V4, fake);
        TableContent before = render(base().snapshot());
        TableContent after = render(withDb().snapshot());
        k.converge(after, T0);
        Instant removed = T0.plusSeconds(1);
        k.commit(Differ.diff(after, before), SyncLevel.PARTIAL, removed);
        List<String> stale = k.staleChains();

        SyncResult r = k.converge(before, removed.plusMillis(500));
        assertTrue(r.success() && r.commands() == 0, r::toString);
        assertEquals(stale, k.staleChains(), "the kernel still holds them flushed");
        assertEquals(removed.plus(KernelTable.STALE_CHAIN_GRACE), k.nextStaleChainDeadline().orElseThrow(), "age kept");

        // A table read back by a new owner (a restart) finds the flushed chains and deletes them after a grace.
        KernelTable restarted = new KernelTable(V4, fake);
        Instant restart = removed.plusSeconds(10);
        restarted.converge(before, restart);
        assertEquals(stale, restarted.staleChains());
        assertEquals(restart.plus(KernelTable.STALE_CHAIN_GRACE), restarted.nextStaleChainDeadline().orElseThrow());
    }

    @Test
    void anEarlyReadBackIsWhatTheFirstConvergeUses() {
        TableContent want = render(withDb().snapshot());
        new KernelTable(V4, fake).converge(want, T0);
        long reads = fake.readCalls();
        KernelTable restarted = new KernelTable(V4, fake);
        restarted.readBackEarly();
        restarted.readBackEarly(); // a second call while one is pending starts nothing
        SyncResult r = restarted.converge(want, T0.plusSeconds(1));
        assertTrue(r.success() && r.commands() == 0, r::toString);
        assertEquals(reads + 1, fake.readCalls(), "one read, made early");
        restarted.converge(want, T0.plusSeconds(2));
        assertEquals(reads + 2, fake.readCalls(), "an early read-back serves one converge only");
    }

    @Test
    void aDiscardedEarlyReadBackIsNotUsed() {
        TableContent want = render(withDb().snapshot());
        new KernelTable(V4, fake).converge(want, T0);
        KernelTable restarted = new KernelTable(V4, fake);
        restarted.readBackEarly();
        SyncResult unused = restarted.converge(want, T0); // waits for the early read to be done
        assertTrue(unused.success());
        restarted.readBackEarly();
        // Wait until the early read happened, then change the table behind its back, as another writer would.
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (fake.readCalls() < 3 && System.nanoTime() < deadline) Thread.onSpinWait();
        fake.flushChain(V4, "services");
        restarted.discardEarlyReadBack();
        SyncResult r = restarted.converge(want, T0.plusSeconds(1));
        assertTrue(r.success() && r.commands() > 0, "repaired from a fresh read: " + r);
        assertEquals(want, fake.dump(V4));
    }

    private static boolean mentions(Command c, String service) {
        Object o = c.object();
        String text = o instanceof Element e ? e.toString() : o instanceof Rule r ? r.chain() + " " + r
                : o instanceof Chain ch ? ch.name() + " " + ch.comment() : o.toString();
        return text.contains(service) || text.contains("172.30.0.2") || text.contains("10.180.0.3");
    }

    /** Random changes with injected failures; a caller that converges after each failure, as the planner does. */
    @Test
    void injectedFailuresLeaveTheKernelAsItWasAndConvergingRepairsEverything() {
        long seed = Long.getLong("sync.seed", System.nanoTime());
        fake.failWhen(FakeNftClient.randomly(seed, 0.05));
        RandomClusters walk = new RandomClusters(seed);
        KernelTable k = new KernelTable(V4, fake);
        Instant now = T0;
        int failures = 0, recoveries = 0;
        boolean failedBefore = true;
        TableContent model = null;
        String what = "start";
        for (int i = 0; i < 400; i++) {
            if (i > 0) what = walk.step();
            TableContent desired = render(walk.snapshot());
            TableContent kernelBefore = fake.dump(V4);
            now = now.plusMillis(400);
            boolean converging = failedBefore;
            SyncResult r = converging ? k.converge(desired, now) : k.commit(Differ.diff(model, desired), SyncLevel.PARTIAL, now);
            model = desired;
            String ctx = "seed " + seed + " (-Dsync.seed=" + seed + "), step " + i + " (" + what + "): " + r;
            assertEquals(converging, r.level() == SyncLevel.CONVERGE, ctx);
            if (r.success()) {
                assertKernelIsModel(fake, k, desired, ctx);
                if (failedBefore && i > 0) recoveries++;
                failedBefore = false;
            } else {
                failures++;
                failedBefore = true;
                assertEquals(NftException.Kind.FAILED, r.errorKind(), ctx);
                if (r.staleChainsDeleted() == 0) assertEquals(kernelBefore, fake.dump(V4), "a failed transaction changed the table: " + ctx);
            }
        }
        fake.failWhen(tx -> false);
        TableContent last = render(walk.snapshot());
        assertTrue(k.converge(last, now.plusSeconds(1)).success());
        assertKernelIsModel(fake, k, last, "seed " + seed);
        assertTrue(failures >= 5, "seed " + seed + ": only " + failures + " injected failures in 400 syncs");
        assertTrue(recoveries > 0, "seed " + seed);
        assertEquals(failures, k.failedTransactions(), "seed " + seed);
        System.out.printf("injected failures: seed %d, %d failed syncs, %d recoveries, %d stale-delete failures%n",
                seed, failures, recoveries, k.failedStaleDeletes());
    }

    @Test
    void convergingRepairsTampering() {
        TableContent want = render(withDb().snapshot());
        String serviceChain = want.chains().keySet().stream().filter(c -> c.startsWith("service-")).findFirst().orElseThrow();
        Element element = want.elements("service-ips").values().iterator().next();
        Map<String, Runnable> tampers = new LinkedHashMap<>();
        tampers.put("table deleted", () -> fake.deleteTable(V4));
        tampers.put("chain flushed", () -> fake.flushChain(V4, serviceChain));
        tampers.put("element removed", () -> fake.removeElement(V4, element));
        tampers.put("ruleset flushed", fake::flushRuleset);
        KernelTable k = new KernelTable(V4, fake);
        Instant now = T0;
        for (Map.Entry<String, Runnable> tamper : tampers.entrySet()) {
            assertTrue(k.converge(want, now).success());
            tamper.getValue().run();
            assertNotEquals(want, fake.dump(V4), tamper.getKey() + " changed nothing");
            now = now.plusSeconds(1);
            SyncResult r = k.converge(want, now);
            assertTrue(r.success(), () -> tamper.getKey() + ": " + r);
            assertTrue(r.commands() > 0, tamper.getKey() + ": nothing was repaired");
            assertEquals(want, fake.dump(V4));
        }
    }

    @Test
    void aCommitOverATamperedTableFailsAndConvergingRepairsIt() {
        KernelTable k = new KernelTable(V4, fake);
        TableContent before = render(base().snapshot());
        k.converge(before, T0);
        fake.deleteTable(V4);
        TableContent want = render(withDb().snapshot());
        SyncResult partial = k.commit(Differ.diff(before, want), SyncLevel.PARTIAL, T0.plusSeconds(1));
        assertFalse(partial.success(), "adding elements to a table that is gone must fail");
        assertEquals(NftException.Kind.NOT_FOUND, partial.errorKind());
        assertNull(fake.dump(V4));
        SyncResult full = k.converge(want, T0.plusSeconds(2));
        assertTrue(full.success() && full.level() == SyncLevel.CONVERGE, full::toString);
        assertEquals(want, fake.dump(V4));
    }

    @Test
    void aNewOwnerAdoptsTheTableAlreadyThere() {
        TableContent want = render(withDb().snapshot());
        new KernelTable(V4, fake).converge(want, T0);
        long calls = fake.applyCalls();

        SyncResult r = new KernelTable(V4, fake).converge(want, T0.plusSeconds(1));
        assertTrue(r.level() == SyncLevel.CONVERGE && r.success());
        assertEquals(0, r.commands());
        assertEquals(calls, fake.applyCalls());
    }

    @Test
    void adoptionWithOneChangedServiceSendsOnlyThatService() {
        TableContent before = render(base().snapshot());
        new KernelTable(V4, fake).converge(before, T0);
        TableContent after = render(withDb().snapshot());
        SyncResult r = new KernelTable(V4, fake).converge(after, T0.plusSeconds(1));
        assertTrue(r.level() == SyncLevel.CONVERGE && r.success());
        assertEquals(Differ.diff(before, after).transaction().size(), r.commands());
        for (Command c : fake.lastTransaction().commands()) assertTrue(mentions(c, "db"), c::toString);
    }

    @Test
    void foreignContentIsReplacedWholesale() {
        TableContent want = render(base().snapshot());
        new KernelTable(V4, fake).converge(want, T0);
        fake.addForeignRule(V4, "services", "{\"match\":{\"op\":\"==\",\"left\":{\"meta\":{\"key\":\"mark\"}},\"right\":7}}");
        SyncResult r = new KernelTable(V4, fake).converge(want, T0);
        assertTrue(r.success() && r.replaced(), r::toString);
        List<Command> sent = fake.lastTransaction().commands();
        assertEquals(new Command(Verb.DELETE, new TableSpec(TableContent.TABLE_COMMENT)), sent.get(1));
        assertEquals(want, fake.dump(V4));
        assertEquals(want, assertDoesNotThrow(() -> fake.readTable(V4)), "the foreign rule went with the old table");
    }

    /** nft 1.0.6 reads chains back without their comments; adoption must not recreate them for that. */
    @Test
    void chainCommentsTheKernelDoesNotReportAreAdopted() {
        TableContent want = render(withDb().snapshot());
        TableContent.Builder b = TableContent.builder(V4);
        want.sets().values().forEach(b::set);
        int stripped = 0;
        for (Chain c : want.chains().values()) {
            if (c.comment() != null) stripped++;
            b.chain(new Chain(c.name(), c.hook(), null));
        }
        for (String c : want.chains().keySet()) want.rules(c).forEach(b::rule);
        want.allElements().forEach(b::element);
        TableContent readBack = b.build();
        assertTrue(stripped > 0, "no commented chain to test with");
        assertFalse(Differ.diff(readBack, want).isEmpty(), "the plain diff recreates commented chains");
        assertEquals(want, AdoptedTable.of(readBack, want));
        assertTrue(Differ.diff(AdoptedTable.of(readBack, want), want).isEmpty());
    }

    // ---- changes over the command budget: cut into parts ----

    private static TestClusters many(int n) {
        TestClusters c = cluster();
        for (int i = 0; i < n; i++) {
            c = c.service(svc("a", "s" + i).clusterIP("172.30.1." + (i + 1)).port("http", "TCP", 80).build())
                    .slice(slice("a", "s" + i, "s" + i + "-1").port("http", "TCP", 8080).ready("10.180.1." + (i + 1), NODE).ready("10.180.2." + (i + 1), NODE).build());
        }
        return c;
    }

    private static TableContent renderFast(ClusterSnapshot s) { return new Renderer(TableLayout.FAST).render(s, TestClusters.node()).table(V4); }

    @Test
    void aColdStartOverTheBudgetIsCommittedInPartsThatEndInTheTable() {
        KernelTable k = new KernelTable(V4, fake, 20);
        TableContent want = renderFast(many(30).snapshot());
        SyncResult r = k.converge(want, T0);
        assertTrue(r.success(), r::toString);
        assertTrue(r.parts() > 1, r::toString);
        assertEquals(r.parts(), fake.applyCalls(), "one kernel transaction per part");
        assertEquals(Differ.diff(null, want).transaction().size(), fake.commandsApplied(), "every command once");
        assertEquals(want, fake.dump(V4));
    }

    /** Each committed part of a cut change is reported as it is committed, with the commands so far; one part is not. */
    @Test
    void eachCommittedPartIsReportedAsItGoes() {
        KernelTable k = new KernelTable(V4, fake, 20);
        List<String> reported = new java.util.ArrayList<>();
        k.progress((family, part, parts, done, commands) -> reported.add(family + " " + part + "/" + parts + " " + done + "/"
                + commands + " applied=" + fake.commandsApplied()));
        TableContent want = renderFast(many(30).snapshot());
        int total = Differ.diff(null, want).transaction().size();
        SyncResult r = k.converge(want, T0);
        assertTrue(r.success(), r::toString);
        assertEquals(r.parts(), reported.size(), reported::toString);
        for (int i = 0; i < reported.size(); i++) {
            String line = reported.get(i);
            assertTrue(line.startsWith(V4 + " " + (i + 1) + "/" + r.parts() + " "), line);
            String done = line.split(" ")[2].split("/")[0];
            assertTrue(line.endsWith("/" + total + " applied=" + done), "reported after the part was committed: " + line);
        }
        assertTrue(reported.get(reported.size() - 1).contains(" " + total + "/" + total + " "), reported::toString);
        reported.clear();
        k.commit(Differ.diff(want, renderFast(many(31).snapshot())), SyncLevel.PARTIAL, T0);
        assertEquals(List.of(), reported, "a change within the budget is one transaction, with nothing to report");
    }

    @Test
    void theLongestPartOfACutChangeIsReportedAndLogged() {
        AtomicInteger calls = new AtomicInteger();
        NftClient slowSecondPart = new NftClient() {
            @Override public void apply(Transaction tx) {
                if (calls.incrementAndGet() == 2) sleep(60);
                fake.apply(tx);
            }
            @Override public String listTableJson(IpFamily f) { return fake.listTableJson(f); }
            @Override public Capabilities capabilities() { return fake.capabilities(); }
            @Override public String describe() { return "fake, slow on the second call"; }
        };
        SyncResult r = new KernelTable(V4, slowSecondPart, 20).converge(renderFast(many(30).snapshot()), T0);
        assertTrue(r.success(), r::toString);
        assertTrue(r.parts() > 2, r::toString);
        assertTrue(r.longestPart().toMillis() >= 60, r::toString);
        assertTrue(r.longestPart().compareTo(r.duration()) <= 0, r::toString);
        assertTrue(r.toString().contains(" transactions (longest " + r.longestPart().toMillis() + " ms)"), r::toString);
        assertEquals(Duration.ZERO, new KernelTable(V4, fake, 20).commit(Differ.diff(fake.dump(V4), fake.dump(V4)), SyncLevel.PARTIAL, T0).longestPart(),
                "nothing sent, nothing waited for");
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aChangeWithinTheBudgetStaysOneTransaction() {
        KernelTable k = new KernelTable(V4, fake, 20);
        TableContent before = renderFast(many(30).snapshot());
        k.converge(before, T0);
        long calls = fake.applyCalls();
        TableContent after = renderFast(many(31).snapshot());
        Differ.Diff d = Differ.diff(before, after);
        assertTrue(d.transaction().size() <= 20, () -> d.transaction().size() + " commands");
        SyncResult r = k.commit(d, SyncLevel.PARTIAL, T0);
        assertTrue(r.success(), r::toString);
        assertEquals(1, r.parts());
        assertEquals(calls + 1, fake.applyCalls(), "one transaction, atomic");
        assertKernelIsModel(fake, k, after, "after the one-transaction change");
    }

    /** Part k refused: parts before it stay in the kernel, and the next converge (a read-back) completes the table. */
    @Test
    void aFailedPartLeavesTheEarlierPartsAndTheNextConvergeCompletesTheTable() {
        TableContent want = renderFast(many(30).snapshot());
        int parts = io.nftproxy.diff.TransactionSplitter.split(Differ.diff(null, want).transaction(), 20).size();
        assertTrue(parts > 4, parts + " parts");
        for (int failing = 1; failing <= parts; failing += 3) {
            FakeNftClient kernel = new FakeNftClient();
            KernelTable k = new KernelTable(V4, kernel, 20);
            int[] calls = {0};
            int fail = failing;
            kernel.failWhen(tx -> ++calls[0] == fail);
            SyncResult r = k.converge(want, T0);
            assertFalse(r.success(), r::toString);
            assertEquals(failing - 1, r.parts(), "parts committed before the refused one");
            assertEquals(k.failedTransactions(), 1);
            TableContent half = kernel.dump(V4);
            if (failing == 1) assertNull(half, "the first part failed: nothing was created");
            else assertNotEquals(want, half, "part " + failing + " failed, yet the table is complete");
            SyncResult again = k.converge(want, T0.plusSeconds(1));
            assertTrue(again.success(), again::toString);
            assertEquals(want, kernel.dump(V4), "converged after part " + failing + " failed");
            assertTrue(k.converge(want, T0.plusSeconds(2)).commands() == 0, "nothing left to fix");
        }
    }

    /** A large partial commit (many services removed and added) that fails halfway is repaired by the next read-back. */
    @Test
    void aLargeCommitFailingHalfwayIsRepairedByTheNextConverge() {
        KernelTable k = new KernelTable(V4, fake, 15);
        TableContent before = renderFast(many(20).snapshot());
        assertTrue(k.converge(before, T0).success());
        TestClusters other = cluster();
        for (int i = 0; i < 20; i++) {
            other = other.service(svc("b", "t" + i).clusterIP("172.30.2." + (i + 1)).port("dns", "UDP", 53).build())
                    .slice(slice("b", "t" + i, "t" + i + "-1").port("dns", "UDP", 5353).ready("10.180.3." + (i + 1), NODE).build());
        }
        TableContent after = renderFast(other.snapshot());
        Differ.Diff d = Differ.diff(before, after);
        int[] calls = {0};
        fake.failWhen(tx -> ++calls[0] == 3);
        SyncResult r = k.commit(d, SyncLevel.PARTIAL, T0);
        assertFalse(r.success(), r::toString);
        assertEquals(2, r.parts());
        fake.failWhen(tx -> false);
        SyncResult again = k.converge(after, T0.plusSeconds(1));
        assertTrue(again.success(), again::toString);
        assertKernelIsModel(fake, k, after, "after the repairing converge");
    }
}
