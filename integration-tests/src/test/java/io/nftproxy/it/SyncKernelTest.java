package io.nftproxy.it;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.RandomClusters;
import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.diff.Differ;
import io.nftproxy.netlink.nft.LibNftablesClient;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Element;
import io.nftproxy.readback.TableComparison;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.readback.Json;
import io.nftproxy.net.IpFamily;
import io.nftproxy.render.Renderer;
import io.nftproxy.sync.SyncLevel;
import io.nftproxy.sync.SyncResult;
import io.nftproxy.sync.KernelTable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.nftproxy.TestClusters.NODE;
import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link KernelTable} against the real kernel in a throwaway namespace, through in-process libnftables: the kernel
 * holds exactly the model after every sync of a long random walk; a restarted syncer adopts what is there without
 * rewriting it; foreign rules and tampering are repaired by a converging sync.
 */
class SyncKernelTest {
    private static final Set<TableComparison.Tolerance> JSON_GAPS = Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED);
    private static final IpFamily V4 = IpFamily.IPV4;
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailable();
    }

    private static TableContent render(ClusterSnapshot s) {
        return Renderer.upstream().render(s, TestClusters.node()).table(V4);
    }

    private static TestClusters base() {
        return cluster().service(svc("a", "web").clusterIP("172.30.0.1").port("http", "TCP", 80).build())
                .slice(slice("a", "web", "web-1").port("http", "TCP", 8080).ready("10.180.0.1", NODE).ready("10.180.0.2", NODE).build())
                .service(svc("a", "dns").clusterIP("172.30.0.10").port("dns", "UDP", 53).build())
                .slice(slice("a", "dns", "dns-1").port("dns", "UDP", 53).ready("10.180.0.5", NODE).build());
    }

    private static TestClusters withDb() {
        return base().service(svc("a", "db").clusterIP("172.30.0.2").port("pg", "TCP", 5432).build())
                .slice(slice("a", "db", "db-1").port("pg", "TCP", 5432).ready("10.180.0.3", NODE).build());
    }

    /** The kernel's table, read back, differs from the model (plus flushed stale chains) in these ways. */
    private static List<String> divergences(NftClient client, KernelTable s, TableContent desired) throws Exception {
        TableContent kernel = client.readTable(desired.family());
        if (kernel == null) return List.of("table missing");
        return TableComparison.diff(Differ.committed(desired, s.staleChains()), kernel, JSON_GAPS);
    }

    @Test
    void kernelEqualsTheModelAfterEverySyncOfARandomWalk() throws Exception {
        long seed = Long.getLong("sync.seed", System.nanoTime());
        int steps = Integer.getInteger("sync.steps", 500);
        RandomClusters walk = new RandomClusters(seed);
        long start = System.nanoTime();
        int full = 0, partial = 0, commands = 0, staleDeleted = 0;
        try (KernelNamespace ns = KernelNamespace.create("walk");
             LibNftablesClient client = LibNftablesClient.inNamespace(ns.handle())) {
            KernelTable s = new KernelTable(V4, client);
            Instant now = T0;
            String what = "start";
            TableContent model = null;
            for (int i = 0; i <= steps; i++) {
                if (i > 0) what = walk.step();
                TableContent desired = render(walk.snapshot());
                now = now.plusMillis(300);
                SyncResult r = model == null ? s.converge(desired, now) : s.commit(Differ.diff(model, desired), SyncLevel.PARTIAL, now);
                model = desired;
                String ctx = "seed " + seed + " (replay with -Dsync.seed=" + seed + "), step " + i + " (" + what + ")";
                assertTrue(r.success(), () -> ctx + ": " + r);
                List<String> diff = divergences(client, s, desired);
                assertTrue(diff.isEmpty(), () -> ctx + ": kernel diverges from the model:\n  " + String.join("\n  ", diff));
                if (r.level() == SyncLevel.CONVERGE) full++; else partial++;
                commands += r.commands();
                staleDeleted += r.staleChainsDeleted();
                if (i % 100 == 50) {
                    // A restart in the middle of the walk: the new syncer adopts whatever state the walk reached.
                    s = new KernelTable(V4, client);
                    TableContent kernel = client.readTable(V4);
                    SyncResult adopted = s.converge(desired, now);
                    assertTrue(adopted.success() && adopted.level() == SyncLevel.CONVERGE && adopted.commands() == 0, () -> ctx + ": restart adoption: "
                            + adopted + "; a plain diff would send:\n" + Differ.diff(kernel, desired).transaction().script(Capabilities.baseline()));
                    full++;
                }
            }
            assertTrue(staleDeleted > 0, "seed " + seed + ": the walk never deleted a stale chain");
        }
        System.out.printf("model-vs-kernel: seed %d, %d steps, %d full + %d partial syncs, %d commands, %d stale chains deleted, 0 divergences, %d ms%n",
                seed, steps, full, partial, commands, staleDeleted, (System.nanoTime() - start) / 1_000_000);
    }

    @Test
    void aRestartedSyncerAdoptsTheTableWithoutRewritingIt() throws Exception {
        TableContent want = render(withDb().snapshot());
        try (KernelNamespace ns = KernelNamespace.create("adopt")) {
            try (LibNftablesClient client = LibNftablesClient.inNamespace(ns.handle())) {
                assertTrue(new KernelTable(V4, client).converge(want, T0).success());
            }
            String before = ns.listTable(V4);
            try (LibNftablesClient client = LibNftablesClient.inNamespace(ns.handle())) {
                String wouldSend = Differ.diff(client.readTable(V4), want).transaction().script(Capabilities.baseline());
                SyncResult r = new KernelTable(V4, client).converge(want, T0.plusSeconds(5));
                assertTrue(r.success() && r.level() == SyncLevel.CONVERGE, r::toString);
                assertEquals(0, r.commands(), () -> "adoption rewrote objects that were right; a plain diff against the "
                        + "kernel would send:\n" + wouldSend);
            }
            assertEquals(before, ns.listTable(V4), "the kernel table (handles included) changed");
        }
    }

    @Test
    void adoptionWithOneChangedServiceTouchesOnlyThatService() throws Exception {
        TableContent before = render(base().snapshot());
        TableContent after = render(withDb().snapshot());
        try (KernelNamespace ns = KernelNamespace.create("adopt")) {
            try (LibNftablesClient client = LibNftablesClient.inNamespace(ns.handle())) {
                assertTrue(new KernelTable(V4, client).converge(before, T0).success());
            }
            Map<String, Object> handlesBefore = chainAndRuleHandles(ns.listTable(V4));
            try (LibNftablesClient client = LibNftablesClient.inNamespace(ns.handle())) {
                KernelTable restarted = new KernelTable(V4, client);
                SyncResult r = restarted.converge(after, T0.plusSeconds(5));
                assertTrue(r.success() && r.level() == SyncLevel.CONVERGE, r::toString);
                assertEquals(Differ.diff(before, after).transaction().size(), r.commands());
                assertTrue(divergences(client, restarted, after).isEmpty());
            }
            Map<String, Object> handlesAfter = chainAndRuleHandles(ns.listTable(V4));
            // Every chain and rule of the unchanged table is the same kernel object: nothing was flushed or re-added.
            for (Map.Entry<String, Object> e : handlesBefore.entrySet()) {
                assertEquals(e.getValue(), handlesAfter.get(e.getKey()), () -> e.getKey() + " was rewritten");
            }
            assertTrue(handlesAfter.keySet().stream().anyMatch(k -> k.contains("a/db/")), "the new service's chain is there");
        }
    }

    /** chain name → handle, and chain name + rule index → handle, from {@code nft -j list table}. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> chainAndRuleHandles(String json) {
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Integer> ruleIndex = new LinkedHashMap<>();
        for (Object o : (List<Object>) ((Map<String, Object>) Json.parse(json)).get("nftables")) {
            Map<String, Object> w = (Map<String, Object>) o;
            if (w.containsKey("chain")) {
                Map<String, Object> c = (Map<String, Object>) w.get("chain");
                out.put("chain " + c.get("name"), c.get("handle"));
            } else if (w.containsKey("rule")) {
                Map<String, Object> r = (Map<String, Object>) w.get("rule");
                int idx = ruleIndex.merge((String) r.get("chain"), 1, Integer::sum);
                out.put("rule " + r.get("chain") + " #" + idx, r.get("handle"));
            }
        }
        return out;
    }

    @Test
    void aForeignRuleMakesTheFullSyncReplaceTheTable() throws Exception {
        TableContent want = render(base().snapshot());
        try (KernelNamespace ns = KernelNamespace.create("foreign");
             LibNftablesClient client = LibNftablesClient.inNamespace(ns.handle())) {
            assertTrue(new KernelTable(V4, client).converge(want, T0).success());
            ns.nftOut("add", "rule", "ip", "kube-proxy", "services", "meta", "mark", "7", "accept");
            assertThrows(io.nftproxy.nft.UnrecognisedRuleException.class, () -> client.readTable(V4));

            KernelTable restarted = new KernelTable(V4, client);
            SyncResult r = restarted.converge(want, T0.plusSeconds(5));
            assertTrue(r.success() && r.replaced(), r::toString);
            assertTrue(divergences(client, restarted, want).isEmpty());
            assertFalse(ns.listTableText(V4).contains("meta mark 0x00000007"), "the foreign rule survived");
        }
    }

    @Test
    void tamperingIsRepairedByAFullSync() throws Exception {
        TableContent want = render(withDb().snapshot());
        String serviceChain = want.chains().keySet().stream().filter(c -> c.startsWith("service-")).findFirst().orElseThrow();
        Element element = want.elements("service-ips").values().iterator().next();
        // Tampering as an operator's shell would do it: nft commands from outside the process.
        Map<String, String> tampers = new LinkedHashMap<>();
        tampers.put("table deleted", "delete table ip kube-proxy\n");
        tampers.put("chain flushed", "flush chain ip kube-proxy " + serviceChain + "\n");
        tampers.put("element removed", new Transaction(V4).delete(element).script(Capabilities.baseline()));
        tampers.put("ruleset flushed", "flush ruleset\n");
        try (KernelNamespace ns = KernelNamespace.create("tamper");
             LibNftablesClient client = LibNftablesClient.inNamespace(ns.handle())) {
            KernelTable s = new KernelTable(V4, client);
            Instant now = T0;
            for (Map.Entry<String, String> t : tampers.entrySet()) {
                assertTrue(s.converge(want, now).success());
                ns.load(t.getValue());
                assertNotEquals(List.of(), divergences(client, s, want), t.getKey() + " changed nothing");
                now = now.plusSeconds(1);
                SyncResult r = s.converge(want, now);
                assertTrue(r.success() && r.level() == SyncLevel.CONVERGE && r.commands() > 0, () -> t.getKey() + ": " + r);
                assertTrue(divergences(client, s, want).isEmpty(), t.getKey() + " not repaired");
                System.out.printf("tamper repair (%s): converge sync of %d commands in %.1f ms%n", t.getKey(), r.commands(),
                        r.duration().toNanos() / 1e6);
            }
        }
    }

    private static <T extends Throwable> void assertThrows(Class<T> type, org.junit.jupiter.api.function.Executable e) {
        org.junit.jupiter.api.Assertions.assertThrows(type, e);
    }
}
