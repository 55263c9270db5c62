package io.nftproxy.it;

import io.nftproxy.demo.KernelNamespace;
import io.nftproxy.TestClusters;
import io.nftproxy.nft.DesiredTable;
import io.nftproxy.nft.KernelTableParser;
import io.nftproxy.nft.TableComparison;
import io.nftproxy.nft.Transaction;
import io.nftproxy.proxy.Capabilities;
import io.nftproxy.proxy.IpFamily;
import io.nftproxy.render.GoldenScenarios;
import io.nftproxy.render.HostileInputs;
import io.nftproxy.render.Renderer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every committed golden script loads with the system nft into a fresh network namespace, and the kernel then
 * holds exactly the model the renderer produces for that scenario. The hostile-input corpus loads too.
 */
class GoldenKernelTest {
    private static final Set<TableComparison.Tolerance> JSON_GAPS = Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED);

    @BeforeAll
    static void kernelAvailable() {
        String cause = KernelNamespace.unavailabilityCause().orElse(null);
        if (cause != null) System.out.println("SKIPPED GoldenKernelTest: " + cause);
        Assumptions.assumeTrue(cause == null, cause);
    }

    static List<GoldenScenarios.Scenario> scenarios() { return GoldenScenarios.all(); }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void goldenScriptLoadsAndKernelHoldsTheModel(GoldenScenarios.Scenario s) throws Exception {
        String golden = goldenFile(s.name());
        Renderer.Rendering r = Renderer.upstream().render(s.snapshot(), s.node());
        try (KernelNamespace ns = KernelNamespace.create("gold")) {
            ns.load(golden);
            for (IpFamily f : IpFamily.values()) {
                DesiredTable kernel = KernelTableParser.parse(ns.listTable(f));
                List<String> diff = TableComparison.diff(r.table(f), kernel, JSON_GAPS);
                assertTrue(diff.isEmpty(), () -> s + " " + f + ":\n  " + String.join("\n  ", diff));
            }
        }
    }

    @Test
    void hostileInputsRenderAScriptTheKernelAccepts() throws Exception {
        Renderer.Rendering r = Renderer.upstream().render(HostileInputs.snapshot(), TestClusters.node());
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

    private static String goldenFile(String name) throws IOException {
        try (InputStream in = GoldenKernelTest.class.getResourceAsStream("/golden/" + name + ".nft")) {
            assertNotNull(in, "golden file for " + name + " is not on the test classpath");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
