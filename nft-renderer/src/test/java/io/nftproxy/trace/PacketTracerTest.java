package io.nftproxy.trace;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Field;
import io.nftproxy.nft.Match;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Statement;
import io.nftproxy.nft.Value;
import io.nftproxy.nft.Verdict;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.Protocol;
import io.nftproxy.render.Renderer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The tracer's evaluation rules on small hand-built tables, and its explanations on the shared cluster. */
class PacketTracerTest {
    private static final Packet FROM_OUTSIDE = Packet.of(Origin.EXTERNAL, "198.51.100.7", "203.0.113.1", Protocol.TCP, 80);

    private static Chain base(String name, String type, String hook, int priority) {
        return new Chain(name, new Chain.Hook(type, hook, priority), null);
    }

    private static Rule rule(String chain, List<Match> m, Statement... s) { return new Rule(chain, m, List.of(s), null); }

    private static Statement go(Verdict v) { return new Statement.Decide(v); }

    private static Trace trace(TableContent t) { return PacketTracer.trace(t, TraceFixtures.node(), FROM_OUTSIDE); }

    @Test
    void jumpLoopIsReportedNotOverflowed() {
        TableContent t = TableContent.builder(IpFamily.IPV4)
                .chain(base("nat-prerouting", "nat", "prerouting", -100))
                .chain(Chain.regular("a")).chain(Chain.regular("b"))
                .rule(rule("nat-prerouting", List.of(), go(Verdict.jump("a"))))
                .rule(rule("a", List.of(), go(Verdict.jump("b"))))
                .rule(rule("b", List.of(), go(Verdict.gotoChain("a"))))
                .build();
        TraceException e = assertThrows(TraceException.class, () -> trace(t));
        assertTrue(e.getMessage().contains("deeper than " + PacketTracer.MAX_DEPTH), e.getMessage());
    }

    @Test
    void gotoReturnsToTheCallerOfTheChainThatWentTo() {
        // base: jump x, then mark 0x2; x: goto y, then drop (never reached); y: mark 0x1 and falls off.
        TableContent t = TableContent.builder(IpFamily.IPV4)
                .chain(base("nat-prerouting", "nat", "prerouting", -100))
                .chain(base("nat-postrouting", "nat", "postrouting", 100))
                .chain(Chain.regular("x")).chain(Chain.regular("y"))
                .rule(rule("nat-prerouting", List.of(), go(Verdict.jump("x"))))
                .rule(rule("nat-prerouting", List.of(), new Statement.MarkOr(0x2)))
                .rule(rule("x", List.of(), go(Verdict.gotoChain("y"))))
                .rule(rule("x", List.of(), go(Verdict.drop())))
                .rule(rule("y", List.of(), new Statement.MarkOr(0x1)))
                .rule(rule("nat-postrouting", List.of(new Match.MarkBits(0x2)), new Statement.Masquerade()))
                .build();
        Outcome o = trace(t).outcome();
        Outcome.Untouched u = assertInstanceOf(Outcome.Untouched.class, o, o.summary());
        assertTrue(u.masquerade().applied(), o.summary());
        assertTrue(u.masquerade().reason().contains("mark 0x2 set in nat-prerouting"), u.masquerade().reason());
    }

    @Test
    void returnLeavesTheChainAndAcceptEndsOnlyItsBaseChain() {
        // pre-dnat (-110): jump r (r: return, drop), accept, drop; nat (-100) still runs and drops.
        TableContent t = TableContent.builder(IpFamily.IPV4)
                .chain(base("filter-prerouting-pre-dnat", "filter", "prerouting", -110))
                .chain(base("nat-prerouting", "nat", "prerouting", -100))
                .chain(Chain.regular("r"))
                .rule(rule("filter-prerouting-pre-dnat", List.of(), go(Verdict.jump("r"))))
                .rule(rule("filter-prerouting-pre-dnat", List.of(), go(new Verdict.Accept())))
                .rule(rule("filter-prerouting-pre-dnat", List.of(), go(Verdict.drop())))
                .rule(rule("r", List.of(), go(new Verdict.Return())))
                .rule(rule("r", List.of(), go(Verdict.drop())))
                .rule(rule("nat-prerouting", List.of(new Match.ProtoIs(Protocol.TCP)), go(Verdict.drop())))
                .build();
        Outcome.Drop d = assertInstanceOf(Outcome.Drop.class, trace(t).outcome());
        assertEquals("nat-prerouting", d.chain());
    }

    @Test
    void basesRunInPriorityOrderNotTableOrder() {
        // Declared in the opposite order: the -110 chain must still run (and reject) before the -100 one drops.
        TableContent t = TableContent.builder(IpFamily.IPV4)
                .chain(base("nat-prerouting", "nat", "prerouting", -100))
                .chain(base("filter-prerouting-pre-dnat", "filter", "prerouting", -110))
                .rule(rule("nat-prerouting", List.of(), go(Verdict.drop())))
                .rule(rule("filter-prerouting-pre-dnat", List.of(), new Statement.Reject()))
                .build();
        Outcome.Reject r = assertInstanceOf(Outcome.Reject.class, trace(t).outcome());
        assertEquals("filter-prerouting-pre-dnat", r.chain());
    }

    @Test
    void everyNumgenBranchIsTracedInIndexOrder() {
        TableContent.Builder b = TableContent.builder(IpFamily.IPV4)
                .chain(base("nat-prerouting", "nat", "prerouting", -100));
        for (String c : List.of("e0", "e1", "e2")) b.chain(Chain.regular(c));
        b.rule(rule("nat-prerouting", List.of(), new Statement.NumgenVmap(
                List.of(Verdict.gotoChain("e0"), Verdict.gotoChain("e1"), Verdict.gotoChain("e2")))));
        for (int i = 0; i < 3; i++) {
            b.rule(rule("e" + i, List.of(), new Statement.Dnat(
                    List.of(new Statement.Target(IpAddress.parse("10.0.2." + (i + 1)), 8080)), true)));
        }
        Trace t = trace(b.build());
        assertEquals(3, t.branches().size());
        Outcome.Dnat d = assertInstanceOf(Outcome.Dnat.class, t.outcome());
        assertEquals(List.of("10.0.2.1:8080", "10.0.2.2:8080", "10.0.2.3:8080"), d.hostPorts());
        assertTrue(t.branches().get(2).choices().get(0).contains("pick 2/3"), t.branches().get(2).choices().toString());
    }

    /**
     * A numgen match forks into "drew it" and "drew something else", with the draw's odds; a mod 4, 3, 2 cascade
     * reaches each of its four targets with probability 1/4, and an unequal cascade with its own odds.
     */
    @Test
    void numgenMatchesForkWithTheirOdds() {
        assertEquals(List.of(Probability.of(1, 4), Probability.of(1, 4), Probability.of(1, 4), Probability.of(1, 4)),
                List.copyOf(cascade(4, 3, 2).dnatOdds().values()));
        Trace t = cascade(2, 2);
        assertEquals(List.of("10.0.2.1:8080", "10.0.2.2:8080", "10.0.2.3:8080"), List.copyOf(t.dnatOdds().keySet()));
        assertEquals(List.of(Probability.of(1, 2), Probability.of(1, 4), Probability.of(1, 4)), List.copyOf(t.dnatOdds().values()));
        assertEquals(List.of("numgen mod 2 != 0", "numgen mod 2 == 0"), t.branches().get(1).choices());
        assertTrue(t.render().contains("branch 3/3 (p 1/4)"), t.render());
        assertTrue(t.render().contains("odds: 10.0.2.1:8080 1/2, 10.0.2.2:8080 1/4, 10.0.2.3:8080 1/4"), t.render());
        // mod 1 always draws 0: no fork.
        assertEquals(1, cascade(1).branches().size());
    }

    /** DNAT rules guarded by {@code numgen random mod m 0} for each m, then an unconditional one. */
    private static Trace cascade(int... moduli) {
        TableContent.Builder b = TableContent.builder(IpFamily.IPV4).chain(base("nat-prerouting", "nat", "prerouting", -100));
        for (int i = 0; i <= moduli.length; i++) {
            List<Match> m = i < moduli.length ? List.of(new Match.NumgenIs(moduli[i], 0)) : List.of();
            b.rule(rule("nat-prerouting", m, new Statement.Dnat(
                    List.of(new Statement.Target(IpAddress.parse("10.0.2." + (i + 1)), 8080)), true)));
        }
        return trace(b.build());
    }

    @Test
    void ctStatusDnatHoldsOnlyAfterADnat() {
        for (boolean dnat : new boolean[]{false, true}) {
            TableContent.Builder b = TableContent.builder(IpFamily.IPV4)
                    .chain(base("nat-prerouting", "nat", "prerouting", -100))
                    .chain(base("nat-postrouting", "nat", "postrouting", 100))
                    .rule(rule("nat-postrouting", List.of(new Match.CtStatusDnat()), new Statement.Masquerade()));
            if (dnat) {
                b.rule(rule("nat-prerouting", List.of(), new Statement.Dnat(
                        List.of(new Statement.Target(IpAddress.parse("10.0.2.1"), 8080)), false)));
            }
            Outcome o = trace(b.build()).outcome();
            boolean masq = o instanceof Outcome.Dnat d ? d.targets().get(0).masquerade().applied()
                    : ((Outcome.Untouched) o).masquerade().applied();
            assertEquals(dnat, masq, o.summary());
        }
    }

    @Test
    void negatedSetLookupMatchesAddressesOutsideTheSet() {
        for (String src : List.of("198.51.100.7", "198.51.100.8")) {
            TableContent t = TableContent.builder(IpFamily.IPV4)
                    .set(new NftSet("allowed", List.of("ipv4_addr"), null, List.of(), 0, null))
                    .element(new Element("allowed", List.of(new Value.Addr(IpAddress.parse("198.51.100.7"))), null, null))
                    .chain(base("filter-prerouting-pre-dnat", "filter", "prerouting", -110))
                    .rule(rule("filter-prerouting-pre-dnat",
                            List.of(new Match.SetLookup(List.of(Field.SADDR), "allowed", true)), go(Verdict.drop())))
                    .build();
            Packet p = Packet.of(Origin.EXTERNAL, src, "203.0.113.1", Protocol.TCP, 80);
            Outcome o = PacketTracer.trace(t, TraceFixtures.node(), p).outcome();
            assertEquals(src.endsWith(".7") ? Outcome.Kind.UNTOUCHED : Outcome.Kind.DROP, o.kind(), o.summary());
        }
    }

    @Test
    void emptyTableLeavesThePacketUntouched() {
        TableContent t = TableContent.builder(IpFamily.IPV4).build();
        Outcome.Untouched u = assertInstanceOf(Outcome.Untouched.class, trace(t).outcome());
        assertEquals("forwarded", u.delivery());
    }

    @Test
    void packetOfTheOtherFamilyIsRefused() {
        TableContent t = TableContent.builder(IpFamily.IPV6).build();
        assertThrows(IllegalArgumentException.class, () -> trace(t));
    }

    @Test
    void packetValidatesPortAndFamilies() {
        assertThrows(IllegalArgumentException.class, () -> Packet.of(Origin.POD, "10.0.1.1", "10.0.1.2", Protocol.TCP, 0));
        assertThrows(IllegalArgumentException.class, () -> Packet.of(Origin.POD, "10.0.1.1", "fd00::1", Protocol.TCP, 80));
    }

    // --- explanations on the shared cluster ---

    private static final Renderer.Rendering CLUSTER = Renderer.upstream().render(PacketFlowTest.snapshot(), TraceFixtures.node());

    private static Trace traceCluster(Origin o, String src, String dst, Protocol p, int port) {
        Packet packet = Packet.of(o, src, dst, p, port);
        return PacketTracer.trace(CLUSTER.table(packet.dst().family()), TraceFixtures.node(), packet);
    }

    private static String lastLine(String s) {
        String[] lines = s.split("\n");
        return lines[lines.length - 1];
    }

    @Test
    void clusterIPVerdictLineNamesTargetsAndTheMasqueradeRule() {
        Trace t = traceCluster(Origin.EXTERNAL, "198.51.100.7", "172.30.0.10", Protocol.TCP, 80);
        assertEquals("verdict: DNAT to 10.0.1.5:8080 | 10.0.2.7:8080 (random), masquerade: yes (mark 0x4000 set in"
                + " services: masquerade clusterIP traffic from outside cluster)", lastLine(t.render()));
    }

    @Test
    void dispatchStepShowsTheLookupKeyAndTheVerdict() {
        Trace t = traceCluster(Origin.POD, "10.0.1.20", "172.30.0.10", Protocol.TCP, 80);
        assertTrue(t.commonSteps().stream().anyMatch(s -> s.isRule()
                        && s.ruleText().equals("ip daddr . meta l4proto . th dport vmap @service-ips")
                        && s.detail().startsWith("ip daddr . meta l4proto . th dport 172.30.0.10 . tcp . 80 found in @service-ips -> goto service-")),
                t.render());
    }

    @Test
    void nodePortLocalVerdictLineHasOneTargetAndNoMasquerade() {
        Trace t = traceCluster(Origin.EXTERNAL, "198.51.100.7", TraceFixtures.NODE_IP, Protocol.TCP, 30081);
        assertEquals("verdict: DNAT to 10.0.1.7:8080, masquerade: no", lastLine(t.render()));
        assertEquals(1, t.branches().size());
        assertTrue(t.render().contains("goto local-"), t.render());
    }

    @Test
    void hairpinMasqueradeSaysWhy() {
        Trace t = traceCluster(Origin.POD, "10.0.1.5", "172.30.0.10", Protocol.TCP, 80);
        Outcome.Dnat d = assertInstanceOf(Outcome.Dnat.class, t.outcome());
        assertEquals("hairpin: 10.0.1.5 . 10.0.1.5 . tcp . 8080 in @hairpin-connections", d.targets().get(0).masquerade().reason());
    }

    @Test
    void affinityRecordsTheSetOfTheChosenEndpointAndExplainsTheEmptySets() {
        Trace t = traceCluster(Origin.POD, "10.0.1.20", "172.30.0.50", Protocol.TCP, 80);
        Outcome.Dnat d = assertInstanceOf(Outcome.Dnat.class, t.outcome());
        for (Outcome.Target target : d.targets()) {
            assertTrue(target.affinitySet().startsWith("affinity-") && target.affinitySet().endsWith("__" + target.ip() + "/8080"),
                    target.toString());
        }
        assertTrue(t.commonSteps().stream().anyMatch(s -> s.detail().contains("affinity sets are empty at trace time")), t.render());
        assertTrue(lastLine(t.render()).contains("affinity: client recorded in 10.0.1.8:8080 -> @affinity-"), t.render());
    }

    @Test
    void rejectNamesTheRuleThatRejected() {
        Trace t = traceCluster(Origin.POD, "10.0.1.20", "172.30.0.10", Protocol.TCP, 81);
        assertEquals("verdict: REJECT in cluster-ips-check: ip daddr @cluster-ips reject comment"
                + " \"Reject traffic to invalid ports of ClusterIPs\"", lastLine(t.render()));
    }

    @Test
    void inputPathEndsAtTheSocketWithoutPostrouting() {
        Trace t = traceCluster(Origin.EXTERNAL, "198.51.100.7", TraceFixtures.NODE_IP, Protocol.TCP, 22);
        Outcome.Untouched u = assertInstanceOf(Outcome.Untouched.class, t.outcome());
        assertEquals("delivered to a local socket", u.delivery());
        assertTrue(t.allSteps().stream().noneMatch(s -> "postrouting".equals(s.hook())), t.render());
        assertTrue(t.allSteps().stream().anyMatch(s -> "input".equals(s.hook())), t.render());
    }
}
