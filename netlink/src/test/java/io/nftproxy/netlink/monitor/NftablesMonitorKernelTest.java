package io.nftproxy.netlink.monitor;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.nft.ExecNftClient;
import io.nftproxy.netlink.nft.LibNftablesClient;
import io.nftproxy.netlink.nft.NftLibrary;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The monitor in a throwaway namespace, against changes made from outside the JVM with {@code ip netns exec NS nft}
 * (foreign) and through our own in-process libnftables client (own).
 */
class NftablesMonitorKernelTest {
    private static final long DEADLINE_MILLIS = 1_000;

    /** Our table in both families: a set with elements, and a chain with rules. */
    private static final String OUR_TABLES = String.join("\n",
            "table ip kube-proxy {",
            "  set cluster-ips { type ipv4_addr; elements = { 10.96.0.1, 10.96.0.2 }; }",
            "  chain services {",
            "    ip daddr @cluster-ips counter",
            "    ip daddr 10.96.0.3 drop",
            "  }",
            "}",
            "table ip6 kube-proxy {",
            "  set cluster-ips { type ipv6_addr; elements = { fd00:10:96::1 }; }",
            "  chain services {",
            "    ip6 daddr @cluster-ips counter",
            "  }",
            "}", "");

    /** A delivered change and when the listener got it. */
    record Seen(TableChange change, long deliveredNanos) {}

    @Test
    void reportsForeignTamperingWithinASecondAndIgnoresOwnAndUnrelatedChanges() throws Exception {
        assumeKernelAndLibrary();
        try (KernelNamespace ns = KernelNamespace.create("nl");
             LibNftablesClient own = LibNftablesClient.inNamespace(ns.handle())) {
            BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
            try (NftablesMonitor monitor = NftablesMonitor.builder().netns(ns.handle())
                    .start(c -> seen.add(new Seen(c, System.nanoTime())))) {
                own.run(OUR_TABLES);
                List<String> report = new ArrayList<>();

                expectForeign(ns, seen, report, "delete table", Set.of(IpFamily.IPV4), NftMessage.DELTABLE,
                        "delete table ip kube-proxy");
                own.run(OUR_TABLES.substring(0, OUR_TABLES.indexOf("table ip6")));

                expectForeign(ns, seen, report, "flush chain", Set.of(IpFamily.IPV4), NftMessage.DELRULE,
                        "flush chain ip kube-proxy services");
                own.run("flush table ip kube-proxy\n" + OUR_TABLES.substring(0, OUR_TABLES.indexOf("table ip6")));

                expectForeign(ns, seen, report, "delete element", Set.of(IpFamily.IPV6), NftMessage.DELSETELEM,
                        "delete element ip6 kube-proxy cluster-ips { fd00:10:96::1 }");

                expectForeign(ns, seen, report, "flush ruleset", Set.of(IpFamily.IPV4, IpFamily.IPV6), NftMessage.DELTABLE,
                        "flush ruleset");
                own.run(OUR_TABLES);

                // Unrelated changes, ours and others': not reported. Proven by ordering rather than by waiting: the
                // next change delivered must be the marker made after them.
                ns.execChecked("nft", "add table ip other; add table inet kube-proxy; add chain ip other c");
                own.run("add element ip kube-proxy cluster-ips { 10.96.0.9 }\nflush chain ip kube-proxy services\n");
                expectForeign(ns, seen, report, "marker after unrelated and own changes", Set.of(IpFamily.IPV4),
                        NftMessage.DELSETELEM, "delete element ip kube-proxy cluster-ips { 10.96.0.9 }");
                Seen extra = seen.poll(300, TimeUnit.MILLISECONDS);
                assertEquals(null, extra, "nothing else reported");
                assertEquals(0, monitor.overruns());
                report.forEach(System.out::println);
            }
        }
    }

    @Test
    void ownChangesCarryTheCtxThreadsPidAndExecChildrenCanBeRegistered() throws Exception {
        assumeKernelAndLibrary();
        OwnProcesses ownPids = OwnProcesses.thisProcess();
        try (KernelNamespace ns = KernelNamespace.create("nl");
             LibNftablesClient lib = LibNftablesClient.inNamespace(ns.handle())) {
            ExecNftClient exec = new ExecNftClient(List.of("ip", "netns", "exec", ns.name(), "nft"), Duration.ofSeconds(20),
                    ownPids::registerChild);
            BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
            try (NftablesMonitor monitor = NftablesMonitor.builder().netns(ns.handle()).ownPids(ownPids)
                    .reportOwnChanges(true).start(c -> seen.add(new Seen(c, System.nanoTime())))) {
                lib.run(OUR_TABLES);
                TableChange libChange = next(seen).change();
                assertEquals(TableChange.Origin.OWN, libChange.origin(), libChange.toString());
                assertTrue(libChange.messages().contains(NftMessage.NEWTABLE), libChange.toString());
                assertEquals(Set.of(IpFamily.IPV4, IpFamily.IPV6), libChange.families());
                // The kernel names the committing thread (the ctx's), not the process.
                assertTrue(java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/self/task/" + libChange.pid())),
                        libChange.toString());
                assertTrue(libChange.pid() != ProcessHandle.current().pid(), libChange.toString());

                exec.run("delete element ip kube-proxy cluster-ips { 10.96.0.1 }\n");
                TableChange execChange = next(seen).change();
                assertEquals(TableChange.Origin.OWN, execChange.origin(), execChange.toString());
                assertEquals("nft", execChange.process(), execChange.toString());

                // The same command without registration is foreign: the verdict comes from the PID, not the name.
                ns.execChecked("nft", "delete element ip kube-proxy cluster-ips { 10.96.0.2 }");
                TableChange other = next(seen).change();
                assertEquals(TableChange.Origin.FOREIGN, other.origin(), other.toString());
                assertEquals("nft", other.process());
                assertTrue(other.generation() > execChange.generation() && execChange.generation() > libChange.generation(),
                        "generations increase: " + libChange + " / " + execChange + " / " + other);
                System.out.println("own libnftables commit: " + libChange);
                System.out.println("own nft child commit:   " + execChange);
                System.out.println("foreign nft commit:     " + other);
            }
        }
    }

    @Test
    void aSocketOverrunIsReportedAsAnOverflow() throws Exception {
        assumeKernelAndLibrary();
        try (KernelNamespace ns = KernelNamespace.create("nl");
             LibNftablesClient own = LibNftablesClient.inNamespace(ns.handle())) {
            BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
            java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
            // The kernel's smallest queue (it rounds 4 KiB up to its minimum and doubles it) and a reader held until
            // the commit is done: the overflow does not depend on how fast this machine reads.
            try (NftablesMonitor monitor = NftablesMonitor.builder().netns(ns.handle()).receiveBufferBytesForTest(4096)
                    .holdReaderUntil(gate).start(c -> seen.add(new Seen(c, System.nanoTime())))) {
                // One own commit of 2,000 elements while nobody reads: far more notifications than the queue holds.
                // Our own commit, so without the overrun nothing would be reported at all.
                StringBuilder s = new StringBuilder("table ip kube-proxy { set big { type ipv4_addr; }; }\n"
                        + "add element ip kube-proxy big { ");
                for (int i = 0; i < 2_000; i++) s.append(i == 0 ? "" : ", ").append("10.").append(i >> 8 & 0xff).append('.').append(i & 0xff).append(".1");
                own.run(s.append(" }\n").toString());
                gate.countDown();
                TableChange c = next(seen).change();
                assertEquals(TableChange.Origin.OVERFLOW, c.origin(), c.toString());
                assertEquals(java.util.Set.of(IpFamily.IPV4, IpFamily.IPV6), c.families(), "either table may have changed");
                assertTrue(c.requiresResync());
                assertTrue(monitor.overruns() > 0);
                System.out.println("overrun: " + c + " (" + monitor.overruns() + " ENOBUFS)");
                // The monitor keeps working after an overrun.
                ns.execChecked("nft", "delete table ip kube-proxy");
                TableChange after = nextForeign(seen);
                assertTrue(after.messages().contains(NftMessage.DELTABLE), after.toString());
            }
        }
    }

    @Test
    void theLedgerVouchesForOthersCommitsToTheirOwnTablesByGeneration() throws Exception {
        assumeKernelAndLibrary();
        CommitLedger ledger = new CommitLedger();
        try (KernelNamespace ns = KernelNamespace.create("nl");
             LibNftablesClient own = LibNftablesClient.inNamespace(ns.handle());
             io.nftproxy.netlink.nft.RulesetGeneration generation = io.nftproxy.netlink.nft.RulesetGeneration.openIn(ns.handle());
             NftablesMonitor monitor = NftablesMonitor.builder().netns(ns.handle()).ledger(ledger).start(c -> { })) {
            own.run(OUR_TABLES);
            long ours = generation.current();
            awaitVouched(ledger, IpFamily.IPV4, ours, ours);

            // A CNI plugin's or firewall's own table: two commits, neither touching kube-proxy.
            ns.execChecked("nft", "add table ip cni");
            ns.execChecked("nft", "add chain ip cni postrouting { type nat hook postrouting priority 100; }");
            long later = generation.current();
            assertEquals(ours + 2, later);
            awaitVouched(ledger, IpFamily.IPV4, ours, later);
            assertTrue(ledger.untouchedBetween(IpFamily.IPV6, ours, later));

            // Someone adds an element to our ip table, then commits elsewhere again (so the ledger has provably read
            // past the touching commit before the negative answer is checked).
            ns.execChecked("nft", "add element ip kube-proxy cluster-ips { 10.96.0.7 }");
            long touched = generation.current();
            ns.execChecked("nft", "add table ip cni2");
            long last = generation.current();
            awaitVouched(ledger, IpFamily.IPV6, ours, last);
            assertFalse(ledger.untouchedBetween(IpFamily.IPV4, ours, last), ledger::toString);
            assertTrue(ledger.untouchedBetween(IpFamily.IPV4, touched, last), "after the touching commit it holds again");

            // A stopped monitor vouches for nothing.
            monitor.close();
            assertFalse(ledger.untouchedBetween(IpFamily.IPV6, ours, last));
        }
    }

    /** Waits (bounded) until the ledger has read up to {@code to} and vouches for {@code (from, to]}. */
    private static void awaitVouched(CommitLedger ledger, IpFamily f, long from, long to) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DEADLINE_MILLIS);
        while (!ledger.untouchedBetween(f, from, to)) {
            if (System.nanoTime() > deadline) throw new AssertionError("ledger never vouched for " + f + " " + from + ".." + to + ": " + ledger);
            Thread.sleep(5);
        }
    }

    private static void expectForeign(KernelNamespace ns, BlockingQueue<Seen> seen, List<String> report, String what,
                                      Set<IpFamily> families, NftMessage message, String command) throws Exception {
        long start = System.nanoTime();
        ns.execChecked("nft", command);
        Seen s = seen.poll(DEADLINE_MILLIS, TimeUnit.MILLISECONDS);
        assertNotNull(s, what + ": no change reported within " + DEADLINE_MILLIS + " ms");
        TableChange c = s.change();
        assertEquals(TableChange.Origin.FOREIGN, c.origin(), what + ": " + c);
        assertEquals(families, c.families(), what + ": " + c);
        assertTrue(c.messages().contains(message), what + ": " + c);
        assertEquals("nft", c.process(), what + ": " + c);
        long fromStart = s.deliveredNanos() - start;
        assertTrue(fromStart < TimeUnit.MILLISECONDS.toNanos(DEADLINE_MILLIS), what + ": " + fromStart / 1e6 + " ms");
        report.add(String.format("monitor latency %-40s nft spawned -> listener called %6.1f ms (socket read -> listener %.3f ms)",
                what, fromStart / 1e6, (s.deliveredNanos() - c.receivedNanos()) / 1e6));
    }

    private static Seen next(BlockingQueue<Seen> seen) throws InterruptedException {
        Seen s = seen.poll(5, TimeUnit.SECONDS);
        assertNotNull(s, "no change reported within 5 s");
        return s;
    }

    private static TableChange nextForeign(BlockingQueue<Seen> seen) throws InterruptedException {
        while (true) {
            TableChange c = next(seen).change();
            if (c.origin() == TableChange.Origin.FOREIGN) return c;
        }
    }

    private static void assumeKernelAndLibrary() {
        KernelTests.assumeAvailable();
        String reason = NftLibrary.isAvailable() ? null : "libnftables unavailable: " + NftLibrary.unavailabilityCause();
        if (reason != null) System.out.println("SKIPPED: " + reason);
        Assumptions.assumeTrue(reason == null, reason);
    }
}
