package io.nftproxy.render;

import io.nftproxy.net.IpFamily;

import io.nftproxy.trace.Outcome;
import io.nftproxy.trace.PacketTracer;
import io.nftproxy.trace.Probability;
import io.nftproxy.trace.Trace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Runs every flow of every golden scenario through {@link PacketTracer} over that scenario's rendered table: the
 * golden files pin the rule text, these flows pin what the rules do to packets.
 */
class GoldenFlowTest {
    static Stream<Arguments> flows() {
        return GoldenScenarios.all().stream().flatMap(s -> s.flows().stream().map(f -> Arguments.of(s, f)));
    }

    static Stream<Arguments> flowsInEveryLayout() {
        return Stream.of(TableLayout.values()).flatMap(l -> flows().map(a -> Arguments.of(l, a.get()[0], a.get()[1])));
    }

    @ParameterizedTest(name = "{0} {1}: {2}")
    @MethodSource("flowsInEveryLayout")
    void flowEndsAsExpected(TableLayout layout, GoldenScenarios.Scenario s, GoldenScenarios.Flow f) {
        Renderer.Rendering r = new Renderer(layout).render(s.snapshot(), s.node());
        Trace trace = PacketTracer.trace(r.table(f.packet().dst().family()), s.node(), f.packet());
        String explain = "\n" + trace.render();
        Outcome o = trace.outcome();

        assertEquals(f.outcome(), o.kind(), explain);
        if (o instanceof Outcome.Dnat d) {
            assertEquals(f.dnatTargets(), d.hostPorts(), explain);
            assertEquals(f.masquerade(), d.masqueradeSummary(), explain);
            // kube-proxy picks uniformly among the endpoints of the chain the packet reaches, whatever the layout.
            Probability each = new Probability(1, f.dnatTargets().size());
            trace.dnatOdds().forEach((hp, p) -> assertEquals(each, p, hp + explain));
            assertEquals(f.dnatTargets(), List.copyOf(trace.dnatOdds().keySet()), explain);
        } else if (o instanceof Outcome.Untouched u) {
            assertEquals(f.masquerade(), u.masquerade().applied() ? "yes" : "no", explain);
        } else if (o instanceof Outcome.Reject rej) {
            assertTrue(rej.chain().startsWith(f.chain()), "rejected in " + rej.chain() + explain);
        } else if (o instanceof Outcome.Drop drop) {
            assertTrue(drop.chain().startsWith(f.chain()), "dropped in " + drop.chain() + explain);
        } else {
            fail("branches disagree on the kind of outcome" + explain);
        }
    }

    /**
     * Both layouts send every flow to the same places with the same odds, branch for branch in outcome: only the
     * way the random pick is written differs.
     */
    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("flows")
    void layoutsAgree(GoldenScenarios.Scenario s, GoldenScenarios.Flow f) {
        IpFamily family = f.packet().dst().family();
        Trace up = PacketTracer.trace(Renderer.upstream().render(s.snapshot(), s.node()).table(family), s.node(), f.packet());
        Trace fast = PacketTracer.trace(new Renderer(TableLayout.FAST).render(s.snapshot(), s.node()).table(family), s.node(), f.packet());
        assertEquals(up.outcome(), fast.outcome(), "\n" + up.render() + "\n" + fast.render());
        assertEquals(up.dnatOdds(), fast.dnatOdds());
        Probability total = Probability.ZERO;
        for (Trace.Branch b : fast.branches()) total = total.plus(b.probability());
        assertEquals(Probability.ONE, total, "branch odds of the fast layout add up to 1");
    }

    @Test
    void everyScenarioHasFlowsAndTheyAreWellFormed() {
        Set<Outcome.Kind> seen = EnumSet.noneOf(Outcome.Kind.class);
        for (GoldenScenarios.Scenario s : GoldenScenarios.all()) {
            assertFalse(s.flows().isEmpty(), s + " has no flows");
            assertEquals(s.flows().size(), s.flows().stream().map(GoldenScenarios.Flow::what).distinct().count(),
                    s + ": flow descriptions repeat");
            for (GoldenScenarios.Flow f : s.flows()) {
                seen.add(f.outcome());
                boolean dnat = f.outcome() == Outcome.Kind.DNAT;
                assertEquals(dnat, !f.dnatTargets().isEmpty(), s + ": " + f + " targets");
                boolean blocked = f.outcome() == Outcome.Kind.REJECT || f.outcome() == Outcome.Kind.DROP;
                assertEquals(blocked, f.chain() != null, s + ": " + f + " chain");
                assertEquals(blocked, f.masquerade() == null, s + ": " + f + " masquerade");
                assertNotNull(f.packet());
            }
        }
        assertEquals(EnumSet.complementOf(EnumSet.of(Outcome.Kind.MIXED)), seen, "every outcome kind is exercised");
        assertTrue(flows().count() >= 2L * GoldenScenarios.all().size(), "flows: " + flows().count());
    }

}
