package io.nftproxy.random;

import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ClusterShrinkerTest {
    /**
     * A planted "bug": the table rendered as if --masquerade-all were flipped. Pods' connections to a Service with
     * an endpoint are then masqueraded (or not) differently, which takes one Service, one port and one endpoint.
     */
    static List<String> masqueradeAllFlipped(RandomCluster c) {
        List<String> out = new ArrayList<>();
        NodeContext node = c.node().context();
        NodeContext wrong = c.node().withMasqueradeAll(!c.node().masqueradeAll()).context();
        for (IpFamily f : IpFamily.values()) {
            Renderer.Rendering right = Renderer.upstream().render(c.snapshot(), node);
            Renderer.Rendering bad = Renderer.upstream().render(c.snapshot(), wrong);
            FlowDifferential.compare(right.table(f), bad.table(f), node, ProbeFlows.of(right.state(f), node))
                    .forEach(d -> out.add(d.packet() + ": " + d.what()));
        }
        return out;
    }

    @Test
    void aPlantedDifferenceShrinksToOneServiceOnePortOneEndpoint() {
        RandomCluster big = ClusterGenerator.generate(11, 20);
        Predicate<RandomCluster> fails = c -> !masqueradeAllFlipped(c).isEmpty();
        assertTrue(fails.test(big));

        RandomCluster min = ClusterShrinker.shrink(big, fails);

        assertTrue(fails.test(min));
        assertEquals(1, min.services().size(), ManifestYaml.of(min));
        ServiceObject s = min.services().get(0);
        assertEquals(1, s.ports().size(), ManifestYaml.of(min));
        assertEquals(1, min.slices().size(), ManifestYaml.of(min));
        assertEquals(1, min.slices().get(0).endpoints().size(), ManifestYaml.of(min));
        assertEquals(List.of(), s.externalIPs());
        assertEquals(List.of(), s.loadBalancerIngress());
        assertEquals("ClusterIP", s.type(), ManifestYaml.of(min));
        assertEquals(1, s.ipFamilies().size());
        assertFalse(min.node().masqueradeAll() && !big.node().masqueradeAll());
    }

    @Test
    void aFeatureIsKeptWhenTheFailureNeedsItAndEverythingElseGoes() {
        Predicate<RandomCluster> fails = c -> c.services().stream().anyMatch(s -> !s.loadBalancerSourceRanges().isEmpty()
                && s.ports().stream().anyMatch(p -> p.protocol().equals("SCTP")));
        long seed = 0;
        while (!fails.test(ClusterGenerator.generate(seed, 40))) seed++;

        RandomCluster min = ClusterShrinker.shrink(ClusterGenerator.generate(seed, 40), fails);

        assertEquals(1, min.services().size());
        ServiceObject s = min.services().get(0);
        assertEquals("LoadBalancer", s.type());
        assertEquals(1, s.ports().size());
        assertEquals("SCTP", s.ports().get(0).protocol());
        assertEquals(List.of(), min.slices());
        assertEquals(null, s.sessionAffinity());
        assertEquals(List.of(), s.externalIPs());
        assertEquals(min.node().withDefaults(), min.node());
    }

    @Test
    void theSeedRunnerShrinksAFailureAndReportsSeedAndManifests() {
        AssertionError e = assertThrows(AssertionError.class, () -> SeedRunner.run("planted", List.of(11L), Duration.ZERO,
                seed -> ClusterGenerator.generate(seed, 20), ClusterShrinkerTest::masqueradeAllFlipped));

        assertTrue(e.getMessage().startsWith("planted failed for seed 11: 20 Services"), e.getMessage());
        assertTrue(e.getMessage().contains("replay with -D" + SeedRunner.SEED_PROPERTY + "=11"), e.getMessage());
        assertTrue(e.getMessage().contains("shrunk to 1 Services, 1 EndpointSlices"), e.getMessage());
        assertTrue(e.getMessage().contains("# render it: nftproxy render --manifests DIR --hostname-override node-a"), e.getMessage());
        assertTrue(e.getMessage().contains("kind: \"Service\""), e.getMessage());
        assertTrue(java.nio.file.Files.exists(SeedRunner.REPORT_DIR.resolve("planted-seed-11").resolve(ManifestYaml.FILE)));
    }

    @Test
    void theBudgetComesFromTheSystemPropertyInSeconds() {
        String before = System.getProperty(SeedRunner.BUDGET_PROPERTY);
        try {
            System.clearProperty(SeedRunner.BUDGET_PROPERTY);
            assertEquals(Duration.ofSeconds(30), SeedRunner.budget(Duration.ofSeconds(30)));
            System.setProperty(SeedRunner.BUDGET_PROPERTY, "2.5");
            assertEquals(Duration.ofMillis(2_500), SeedRunner.budget(Duration.ofSeconds(30)));
            System.setProperty(SeedRunner.BUDGET_PROPERTY, "soon");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SeedRunner.budget(Duration.ZERO));
            assertEquals("-D" + SeedRunner.BUDGET_PROPERTY + "=soon is not a number of seconds", e.getMessage());
        } finally {
            if (before == null) System.clearProperty(SeedRunner.BUDGET_PROPERTY);
            else System.setProperty(SeedRunner.BUDGET_PROPERTY, before);
        }
    }

    @Test
    void everyShrinkStepKeepsTheClusterValid() {
        // Shrink toward "still has a LoadBalancer" and check each accepted step renders without a skipped object.
        List<String> invalid = new ArrayList<>();
        ClusterShrinker.shrink(ClusterGenerator.generate(21, 40), c -> {
            new Renderer(TableLayout.FLAT).render(c.snapshot(), c.node().context()).diagnostics().stream()
                    .filter(d -> !d.kept()).forEach(d -> invalid.add(d.toString()));
            return c.services().stream().anyMatch(s -> "LoadBalancer".equals(s.type()));
        });
        assertEquals(List.of(), invalid);
    }
}
