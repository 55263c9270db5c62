package io.nftproxy.it;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.TestClusters;
import io.nftproxy.diff.Differ;
import io.nftproxy.nft.Chain;
import io.nftproxy.nft.Command;
import io.nftproxy.nft.TableContent;
import io.nftproxy.readback.KernelTableParser;
import io.nftproxy.readback.TableComparison;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Verb;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;
import io.nftproxy.render.GoldenScenarios;
import io.nftproxy.render.HostileInputs;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every committed golden script, in both table layouts ({@code golden/} and {@code golden-fast/}), loads with the
 * system nft into a fresh network namespace, and the kernel then holds exactly the model the renderer produces for
 * that scenario in that layout. The hostile-input corpus loads too.
 */
class GoldenKernelTest {
    private static final Set<TableComparison.Tolerance> JSON_GAPS = Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED);

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailable();
    }

    static Stream<Arguments> scenarios() {
        return Stream.of(TableLayout.values()).flatMap(l -> GoldenScenarios.all().stream().map(s -> Arguments.of(l, s)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("scenarios")
    void goldenScriptLoadsAndKernelHoldsTheModel(TableLayout layout, GoldenScenarios.Scenario s) throws Exception {
        String golden = goldenFile(GoldenScenarios.goldenDir(layout), s.name());
        Renderer.Rendering r = new Renderer(layout).render(s.snapshot(), s.node());
        try (KernelNamespace ns = KernelNamespace.create("gold")) {
            ns.load(golden);
            for (IpFamily f : IpFamily.values()) {
                TableContent kernel = KernelTableParser.parse(ns.listTable(f));
                List<String> diff = TableComparison.diff(r.table(f), kernel, JSON_GAPS);
                assertTrue(diff.isEmpty(), () -> s + " " + f + ":\n  " + String.join("\n  ", diff));
            }
        }
    }

    static Stream<Arguments> chainLayoutScenarios() {
        return scenarios().filter(a -> a.get()[0] != TableLayout.FLAT);
    }

    /**
     * Switching between the chain layouts on a loaded table is an ordinary diff: it rewrites the rules of the policy
     * chains and nothing else, and the kernel then holds the other layout's model.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("chainLayoutScenarios")
    void switchingLayoutsRewritesOnlyPolicyChainRules(TableLayout from, GoldenScenarios.Scenario s) throws Exception {
        TableLayout to = from == TableLayout.UPSTREAM ? TableLayout.FAST : TableLayout.UPSTREAM;
        Renderer.Rendering before = new Renderer(from).render(s.snapshot(), s.node());
        Renderer.Rendering after = new Renderer(to).render(s.snapshot(), s.node());
        try (KernelNamespace ns = KernelNamespace.create("swap")) {
            for (IpFamily f : IpFamily.values()) ns.load(Transaction.creating(before.table(f)).script(Capabilities.baseline()));
            for (IpFamily f : IpFamily.values()) {
                Differ.Diff d = Differ.diff(before.table(f), after.table(f));
                assertTrue(d.staleChains().isEmpty(), d.staleChains()::toString);
                for (Command c : d.transaction().commands()) {
                    String what = c.verb() + " " + c.object();
                    boolean policyChain = c.object() instanceof Chain ch && ch.name().matches("(service|local)-[A-Z0-9]{8}-.*");
                    boolean policyRule = c.object() instanceof Rule r && r.chain().matches("(service|local)-[A-Z0-9]{8}-.*");
                    assertTrue((c.verb() == Verb.FLUSH && policyChain) || (c.verb() == Verb.ADD && policyRule), what);
                }
                if (!d.isEmpty()) ns.load(d.transaction().script(Capabilities.baseline()));
                List<String> diff = TableComparison.diff(after.table(f), KernelTableParser.parse(ns.listTable(f)), JSON_GAPS);
                assertTrue(diff.isEmpty(), () -> s + " " + f + " after switching to " + to + ":\n  " + String.join("\n  ", diff));
            }
        }
    }

    /**
     * Switching to the flat layout and back on a loaded table is a diff too: simple ports' chains are left flushed
     * and deleted in the follow-up transaction, as any stale chain, and the kernel then holds the other model.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.nftproxy.render.GoldenScenarios#all")
    void switchingToTheFlatLayoutAndBackConverges(GoldenScenarios.Scenario s) throws Exception {
        try (KernelNamespace ns = KernelNamespace.create("flatswap")) {
            Renderer.Rendering fast = new Renderer(TableLayout.FAST).render(s.snapshot(), s.node());
            Renderer.Rendering flat = new Renderer(TableLayout.FLAT).render(s.snapshot(), s.node());
            for (IpFamily f : IpFamily.values()) ns.load(Transaction.creating(fast.table(f)).script(Capabilities.baseline()));
            for (IpFamily f : IpFamily.values()) {
                switchTo(ns, f, fast.table(f), flat.table(f), s + " to flat");
                switchTo(ns, f, flat.table(f), fast.table(f), s + " back to fast");
            }
        }
    }

    /**
     * issue 24: the flat layout's element comments on the real kernel. A port renamed on the same number changes
     * the comment of each of its elements: the diff deletes and re-adds them in one transaction, and the kernel then
     * holds the new comments; a 191-byte namespace/name:port is stored cut to 128 bytes, as the model holds it.
     */
    @org.junit.jupiter.api.Test
    void aChangedElementCommentIsRewrittenAndALongOneReadsBackAsTheModel() throws Exception {
        try (KernelNamespace ns = KernelNamespace.create("comments")) {
            TableContent http = commented("http"), web = commented("web");
            ns.load(Transaction.creating(http).script(Capabilities.baseline()));
            List<String> loaded = TableComparison.diff(http, KernelTableParser.parse(ns.listTable(IpFamily.IPV4)), JSON_GAPS);
            assertTrue(loaded.isEmpty(), () -> String.join("\n  ", loaded));
            Differ.Diff d = Differ.diff(http, web);
            assertTrue(d.transaction().commands().stream().anyMatch(c -> c.verb() == Verb.DELETE
                    && c.object() instanceof io.nftproxy.nft.Element e && e.set().startsWith("flat-endpoints-")), "rewritten");
            switchTo(ns, IpFamily.IPV4, http, web, "port renamed");
            assertTrue(ns.listTableText(IpFamily.IPV4).contains("comment \"demo/hello:web\""));
            assertTrue(Differ.diff(KernelTableParser.parse(ns.listTable(IpFamily.IPV4)), web).transaction().commands().stream()
                    .noneMatch(c -> c.object() instanceof io.nftproxy.nft.Element), "the elements read back need no command");
        }
    }

    private static TableContent commented(String portName) {
        String ns = "n".repeat(63), name = "s".repeat(63);
        TestClusters c = TestClusters.cluster()
                .with(TestClusters.svc("demo", "hello").clusterIP("172.30.0.1").nodePort(portName, "TCP", 80, 30080))
                .with(TestClusters.slice("demo", "hello", "a").port(portName, "TCP", 8080).ready("10.180.0.1", "elsewhere")
                        .ready("10.180.0.2", "elsewhere"))
                .with(TestClusters.svc(ns, name).clusterIP("172.30.0.2").port("p".repeat(63), "TCP", 80))
                .with(TestClusters.slice(ns, name, "a").port("p".repeat(63), "TCP", 8080).ready("10.180.0.3", "elsewhere"));
        return new Renderer(TableLayout.FLAT).render(c.snapshot(), TestClusters.node()).table(IpFamily.IPV4);
    }

    private static void switchTo(KernelNamespace ns, IpFamily f, TableContent from, TableContent to, String what) throws Exception {
        Differ.Diff d = Differ.diff(from, to);
        if (!d.isEmpty()) ns.load(d.transaction().script(Capabilities.baseline()));
        if (!d.staleChains().isEmpty()) ns.load(Differ.deletingChains(f, d.staleChains()).script(Capabilities.baseline()));
        List<String> diff = TableComparison.diff(to, KernelTableParser.parse(ns.listTable(f)), JSON_GAPS);
        assertTrue(diff.isEmpty(), () -> what + " " + f + ":\n  " + String.join("\n  ", diff));
    }

    @ParameterizedTest
    @EnumSource(TableLayout.class)
    void hostileInputsRenderAScriptTheKernelAccepts(TableLayout layout) throws Exception {
        Renderer.Rendering r = new Renderer(layout).render(HostileInputs.snapshot(), TestClusters.node());
        try (KernelNamespace ns = KernelNamespace.create("hostile")) {
            for (IpFamily f : IpFamily.values()) ns.load(Transaction.creating(r.table(f)).script(Capabilities.baseline()));
            for (IpFamily f : IpFamily.values()) {
                List<String> diff = TableComparison.diff(r.table(f), KernelTableParser.parse(ns.listTable(f)), JSON_GAPS);
                assertTrue(diff.isEmpty(), () -> f + ":\n  " + String.join("\n  ", diff));
            }
            String listing = ns.listTableText(IpFamily.IPV4);
            for (String bad : HostileInputs.FORBIDDEN) assertTrue(!listing.contains(bad), "kernel listing contains " + bad);
            assertTrue(listing.contains("172.30.8.1 . tcp . 80"), "the good service is in the kernel");
        }
    }

    private static String goldenFile(String dir, String name) throws IOException {
        try (InputStream in = GoldenKernelTest.class.getResourceAsStream("/" + dir + "/" + name + ".nft")) {
            assertNotNull(in, "golden file for " + name + " is not on the test classpath");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
