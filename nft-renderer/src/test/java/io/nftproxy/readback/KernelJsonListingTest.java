package io.nftproxy.readback;

import io.nftproxy.net.IpFamily;
import io.nftproxy.nft.KernelJsonListing;
import io.nftproxy.nft.TableContent;
import io.nftproxy.render.GoldenScenarios;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fake kernel's listing ({@link KernelJsonListing}) is what the parser reads: every table of the scenario
 * catalogue, in every layout and family, reads back as itself, so the kernel contract tests mean the same against
 * the fake.
 */
class KernelJsonListingTest {
    static Stream<Arguments> tables() {
        return Stream.of(TableLayout.values()).flatMap(l -> Stream.concat(GoldenScenarios.all().stream(),
                GoldenScenarios.kernelForms().stream()).map(s -> Arguments.of(l, s)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("tables")
    void everyGoldenTableReadsBackAsItself(TableLayout layout, GoldenScenarios.Scenario s) throws Exception {
        Renderer.Rendering r = new Renderer(layout).render(s.snapshot(), s.node());
        for (IpFamily f : IpFamily.values()) {
            TableContent table = r.table(f);
            List<String> diff = TableComparison.diff(table, KernelTableParser.parse(KernelJsonListing.of(table)), Set.of());
            assertTrue(diff.isEmpty(), () -> f + ": the listing reads back as another table:\n" + String.join("\n", diff));
        }
    }
}
