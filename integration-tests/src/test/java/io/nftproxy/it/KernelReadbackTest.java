package io.nftproxy.it;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.nft.Chain;
import io.nftproxy.nft.TableContent;
import io.nftproxy.readback.KernelTableParser;
import io.nftproxy.readback.TableComparison;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.UnrecognisedRuleException;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;
import io.nftproxy.render.GoldenScenarios;
import io.nftproxy.render.Renderer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Loads rendered tables into a real kernel (in a throwaway network namespace), reads them back with
 * {@code nft -j list table}, and checks that the kernel holds exactly the model: every rule form the renderer
 * writes is accepted by nft and reads back as the same records.
 */
class KernelReadbackTest {
    /** nft 1.0.6 does not print chain comments in JSON; they are checked in the text listing instead. */
    private static final Set<TableComparison.Tolerance> JSON_GAPS = Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED);

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailable();
    }

    /** The golden scenarios and the catalogue's kernel forms. */
    static List<GoldenScenarios.Scenario> scenarios() {
        return Stream.concat(GoldenScenarios.all().stream(), GoldenScenarios.kernelForms().stream()).toList();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void kernelHoldsExactlyTheModel(GoldenScenarios.Scenario s) throws Exception {
        long start = System.nanoTime();
        Renderer.Rendering r = Renderer.upstream().render(s.snapshot(), s.node());
        // A golden scenario may skip invalid input on purpose (its golden file pins the diagnostics); a kernel form may not.
        if (GoldenScenarios.kernelForms().contains(s)) assertTrue(r.diagnostics().isEmpty(), () -> "scenario has invalid input: " + r.diagnostics());
        try (KernelNamespace ns = KernelNamespace.create("rb")) {
            for (IpFamily f : IpFamily.values()) ns.load(Transaction.creating(r.table(f)).script(Capabilities.baseline()));
            for (IpFamily f : IpFamily.values()) {
                TableContent model = r.table(f);
                TableContent kernel = KernelTableParser.parse(ns.listTable(f));
                List<String> diff = TableComparison.diff(model, kernel, JSON_GAPS);
                assertTrue(diff.isEmpty(), () -> s + " " + f + ": kernel differs from the model:\n  " + String.join("\n  ", diff));
                assertChainCommentsInTextListing(model, ns.listTableText(f));
            }
            if (hasIpv6Service(s)) {
                TableContent v6 = KernelTableParser.parse(ns.listTable(IpFamily.IPV6));
                assertFalse(v6.elements("service-ips").isEmpty(), "ip6 table has no services");
                assertEquals(r.table(IpFamily.IPV6).ruleCount(), v6.ruleCount());
            }
        }
        System.out.printf("kernel read-back %-50s %4d ms%n", s.name(), (System.nanoTime() - start) / 1_000_000);
    }

    /** The kernel's hooks and priorities are the model's, though nft 1.0.6 forces numeric spelling on output. */
    @Test
    void baseChainHooksAndPrioritiesMatchTheModel() throws Exception {
        GoldenScenarios.Scenario s = GoldenScenarios.kernelForms().get(0);
        TableContent model = Renderer.upstream().render(s.snapshot(), s.node()).table(IpFamily.IPV4);
        String script = Transaction.creating(model).script(Capabilities.baseline());
        assertTrue(script.contains("chain ip kube-proxy nat-output { type nat hook output priority -100 ; }"), script);
        assertTrue(script.contains("chain ip kube-proxy filter-output-pre-dnat { type filter hook output priority -110 ; }"), script);
        try (KernelNamespace ns = KernelNamespace.create("rb")) {
            ns.load(script);
            TableContent kernel = KernelTableParser.parse(ns.listTable(IpFamily.IPV4));
            int base = 0;
            for (Chain c : model.chains().values()) {
                assertEquals(c.hook(), kernel.chain(c.name()).hook(), c.name());
                if (c.isBase()) base++;
            }
            assertEquals(8, base);
        }
    }

    /** Why the numeric spelling exists: this nft refuses the symbolic one on the output hook. */
    @Test
    void symbolicDstnatOnTheOutputHookIsRefusedByNft106() throws Exception {
        try (KernelNamespace ns = KernelNamespace.create("rb")) {
            String version = ns.nftOut("--version");
            Assumptions.assumeTrue(version.contains("v1.0.6"), "only nft 1.0.6 is known to refuse it; this is " + version.strip());
            KernelNamespace.Result r = ns.tryLoad("add table ip kube-proxy\n"
                    + "add chain ip kube-proxy nat-output { type nat hook output priority dstnat ; }\n");
            assertFalse(r.ok(), "nft 1.0.6 accepted priority dstnat on output");
            System.out.println("nft 1.0.6 on `priority dstnat` at output: " + r.stderr().lines().findFirst().orElse(""));
        }
    }

    /** A rule or policy someone else added is reported, never read back as part of our table. */
    @Test
    void foreignContentIsReportedNotDropped() throws Exception {
        GoldenScenarios.Scenario s = GoldenScenarios.kernelForms().get(0);
        TableContent model = Renderer.upstream().render(s.snapshot(), s.node()).table(IpFamily.IPV4);
        try (KernelNamespace ns = KernelNamespace.create("rb")) {
            ns.load(Transaction.creating(model).script(Capabilities.baseline()));
            ns.load("add rule ip kube-proxy services ip saddr 198.51.100.7 counter accept\n"
                    + "add chain ip kube-proxy filter-input { type filter hook input priority 0 ; policy drop ; }\n");
            UnrecognisedRuleException e = assertThrows(UnrecognisedRuleException.class,
                    () -> KernelTableParser.parse(ns.listTable(IpFamily.IPV4)));
            assertEquals(2, e.items().size(), e.getMessage());
            assertTrue(e.getMessage().contains("statement counter"), e.getMessage());
            assertTrue(e.getMessage().contains("policy drop"), e.getMessage());
            assertTrue(TableComparison.diff(model, e.partialTable(), JSON_GAPS).isEmpty());
        }
    }

    /** ClientIP affinity entries written by the packet path are kernel state, not desired state. */
    @Test
    void affinityEntriesFromThePacketPathAreNotPartOfTheTable() throws Exception {
        GoldenScenarios.Scenario s = GoldenScenarios.kernelForms().stream().filter(x -> x.name().equals("kernel-session-affinity")).findFirst().orElseThrow();
        TableContent model = Renderer.upstream().render(s.snapshot(), s.node()).table(IpFamily.IPV4);
        String affinitySet = model.sets().keySet().stream().filter(n -> n.startsWith("affinity-")).findFirst().orElseThrow();
        try (KernelNamespace ns = KernelNamespace.create("rb")) {
            ns.load(Transaction.creating(model).script(Capabilities.baseline()));
            ns.load("add element ip kube-proxy " + affinitySet + " { 198.51.100.9 }\n");
            assertTrue(ns.listTableText(IpFamily.IPV4).contains("198.51.100.9 expires"));
            TableContent kernel = KernelTableParser.parse(ns.listTable(IpFamily.IPV4));
            assertTrue(TableComparison.diff(model, kernel, JSON_GAPS).isEmpty());
        }
    }

    /** A scenario whose ip6 table must have content: one of its Services has the IPv6 family. */
    private static boolean hasIpv6Service(GoldenScenarios.Scenario s) {
        return s.snapshot().services().stream().anyMatch(svc -> svc.ipFamilies().contains("IPv6"));
    }

    private static void assertChainCommentsInTextListing(TableContent model, String text) {
        for (Chain c : model.chains().values()) {
            if (c.comment() == null) continue;
            Pattern p = Pattern.compile("chain " + Pattern.quote(c.name()) + " \\{\\s*comment " + Pattern.quote("\"" + c.comment() + "\""));
            assertTrue(p.matcher(text).find(), () -> "chain " + c.name() + " lost its comment:\n" + text);
        }
    }

}
