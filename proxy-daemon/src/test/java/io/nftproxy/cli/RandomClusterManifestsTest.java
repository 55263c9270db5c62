package io.nftproxy.cli;

import io.nftproxy.net.IpFamily;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.nft.Transaction;
import io.nftproxy.random.ClusterGenerator;
import io.nftproxy.random.ManifestYaml;
import io.nftproxy.random.RandomCluster;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The manifests a failing random cluster is reported as ({@link ManifestYaml}) reproduce it: {@code nftproxy render
 * --manifests DIR} with the node's flags ({@code NodeSettings.renderArgs()}) prints exactly the tables the
 * in-process render of the generated objects gives, in every layout, without a warning.
 */
class RandomClusterManifestsTest {
    @Test
    void renderOfTheWrittenManifestsIsTheInProcessRender(@TempDir Path tmp) throws Exception {
        for (long seed = 0; seed < 12; seed++) {
            RandomCluster c = ClusterGenerator.generate(seed, 30);
            Path dir = tmp.resolve("seed-" + seed);
            ManifestYaml.write(c, dir);
            TableLayout layout = TableLayout.values()[(int) (seed % TableLayout.values().length)];
            List<String> args = new ArrayList<>(List.of("render", "--manifests", dir.toString(), "--table-layout", layout.cliName()));
            args.addAll(c.node().renderArgs());

            RenderCommandTest.Run r = RenderCommandTest.run(args.toArray(String[]::new));

            Renderer.Rendering expected = new Renderer(layout).render(c.snapshot(), c.node().context());
            StringBuilder script = new StringBuilder();
            for (IpFamily f : IpFamily.values()) script.append(Transaction.creating(expected.table(f)).script(Capabilities.baseline()));
            String what = c.summary() + ", " + layout.cliName() + ", " + args;
            assertEquals(0, r.exit(), what + "\n" + r.err());
            assertEquals("", r.err(), what);
            assertEquals(script.toString(), r.out(), what);
        }
    }
}
