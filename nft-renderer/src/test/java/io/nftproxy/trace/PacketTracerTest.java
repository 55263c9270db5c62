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
                .rule(rule("nat-prerouting", List.of(), go(new Verdict.Jump("a"))))
                .rule(rule("a", List.of(), go(new Verdict.Jump("b"))))
                .rule(rule("b", List.of(), go(new Verdict.Goto("a"))))
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
                .rule(rule("nat-prerouting", List.of(), go(new Verdict.Jump("x"))))
                .rule(rule("nat-prerouting", List.of(), new Statement.MarkOr(0x2)))
                .rule(rule("x", List.of(), go(new Verdict.Goto("y"))))
                .rule(rule("x", List.of(), go(new Verdict.Drop())))
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
                .rule(rule("filter-prerouting-pre-dnat", List.of(), go(new Verdict.Jump("r"))))
                .rule(rule("filter-prerouting-pre-dnat", List.of(), go(new Verdict.Accept())))
                .rule(rule("filter-prerouting-pre-dnat", List.of(), go(new Verdict.Drop())))
                .rule(rule("r", List.of(), go(new Verdict.Return())))
                .rule(rule("r", List.of(), go(new Verdict.Drop())))
                .rule(rule("nat-prerouting", List.of(new Match.ProtoIs(Protocol.TCP)), go(new Verdict.Drop())))
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
                .rule(rule("nat-prerouting", List.of(), go(new Verdict.Drop())))
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
                List.of(new Verdict.Goto("e0"), new Verdict.Goto("e1"), new Verdict.Goto("e2")))));
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
        assertEquals(List.of(new Probability(1, 4), new Probability(1, 4), new Probability(1, 4), new Probability(1, 4)),
                List.copyOf(cascade(4, 3, 2).dnatOdds().values()));
        Trace t = cascade(2, 2);
        assertEquals(List.of("10.0.2.1:8080", "10.0.2.2:8080", "10.0.2.3:8080"), List.copyOf(t.dnatOdds().keySet()));
        assertEquals(List.of(new Probability(1, 2), new Probability(1, 4), new Probability(1, 4)),
                List.copyOf(t.dnatOdds().values()));
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
                            List.of(new Match.SetLookup(List.of(Field.SADDR), "allowed", true)), go(new Verdict.Drop())))
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

    // --- flat tables: fixed sets and numgen data maps (hand-built in FlatTable) ---

    private static final String SVC2 = "172.30.0.41";
    private static final String SVC3 = "172.30.0.42";
    private static final List<String> EP2 = List.of("10.180.0.1:8080", "10.180.0.2:8080");
    private static final List<String> EP3 = List.of("10.180.1.1:8080", "10.180.1.2:8080", "10.180.1.3:8080");
    private static final String POD_CLIENT = "10.0.1.50";
    private static final String CLIENT = "198.51.100.7";

    private static Trace flat(TableContent t, Origin o, String src, String dst, Protocol p, int port) {
        return PacketTracer.trace(t, TraceFixtures.node(), Packet.of(o, src, dst, p, port));
    }

    private static Probability total(Trace t) {
        Probability sum = Probability.ZERO;
        for (Trace.Branch b : t.branches()) sum = sum.plus(b.probability());
        return sum;
    }

    private static List<Probability> each(int n) {
        return java.util.Collections.nCopies(n, new Probability(1, n));
    }

    /** Every step of the trace whose detail contains {@code text}. */
    private static List<Step> steps(Trace t, String text) {
        return t.allSteps().stream().filter(s -> s.detail().contains(text)).toList();
    }

    @Test
    void flatClusterIPPicksEachEndpointWithExactOdds() {
        TableContent t = new FlatTable().service(Protocol.TCP, SVC2, List.of(), 80, 0, EP2)
                .service(Protocol.TCP, SVC3, List.of(), 80, 0, EP3).build();
        for (List<String> eps : List.of(EP2, EP3)) {
            Trace tr = flat(t, Origin.POD, POD_CLIENT, eps == EP2 ? SVC2 : SVC3, Protocol.TCP, 80);
            Outcome.Dnat d = assertInstanceOf(Outcome.Dnat.class, tr.outcome(), tr.render());
            assertEquals(eps, d.hostPorts(), tr.render());
            assertEquals("no", d.masqueradeSummary(), tr.render());
            assertEquals(eps, List.copyOf(tr.dnatOdds().keySet()));
            assertEquals(each(eps.size()), List.copyOf(tr.dnatOdds().values()), tr.render());
            assertEquals(eps.size(), tr.branches().size());
            assertEquals(Probability.ONE, total(tr));
        }
        Trace two = flat(t, Origin.POD, POD_CLIENT, SVC2, Protocol.TCP, 80);
        assertEquals(List.of("numgen pick 1/2 -> 10.180.0.2:8080"), two.branches().get(1).choices());
        String out = two.render();
        assertTrue(out.contains("ip daddr . meta l4proto . th dport 172.30.0.41 . tcp . 80 found in @service-ips -> continue"
                + " (on with the next rule of services)"), out);
        assertTrue(out.contains("services: ip daddr . tcp dport @flat-ips-tcp-2 dnat ip addr . port to ip daddr . tcp dport"
                + " . numgen random mod 2 map @flat-endpoints-tcp-2\n"), out);
        assertTrue(out.contains("ip daddr . tcp dport 172.30.0.41 . 80 in @flat-ips-tcp-2; DNAT via @flat-endpoints-tcp-2 slot 1"
                + " of 2 -> 10.180.0.2:8080 (element 172.30.0.41 . 80 . 1; every slot is traced)"), out);
        assertTrue(out.contains("branch 2/2 (p 1/2): numgen pick 1/2 -> 10.180.0.2:8080"), out);
        assertTrue(out.contains("odds: 10.180.0.1:8080 1/2, 10.180.0.2:8080 1/2"), out);
        // The rule for another endpoint count does not match this port's key.
        assertTrue(out.contains("no match: ip daddr . tcp dport 172.30.0.41 . 80 not in @flat-ips-tcp-1"), out);
    }

    @Test
    void alikeRulesThatDoNotMatchArePrintedAsOne() {
        TableContent t = new FlatTable().noEndpoints(Protocol.TCP, "172.30.0.60", 80, 0, new Verdict.Continue()).build();
        Trace tr = flat(t, Origin.POD, POD_CLIENT, "172.30.0.60", Protocol.TCP, 80);
        String out = tr.render();
        assertTrue(out.contains("\n    services: 3 rules: ip daddr . tcp dport @flat-ips-tcp-{1..3} dnat ip addr . port to ip daddr"
                + " . tcp dport . numgen random mod {1..3} map @flat-endpoints-tcp-{1..3}\n"
                + "        no match: ip daddr . tcp dport 172.30.0.60 . 80 not in @flat-ips-tcp-{1..3}\n"
                + "    services: 3 rules: ip daddr . udp dport @flat-ips-udp-{1..3} dnat"), out);
        assertTrue(out.contains("\n    services: 3 rules: ip daddr @nodeport-ips udp dport @flat-nodeports-udp-{1..3} mark set mark or"
                + " 0x4000 dnat ip addr . port to udp dport . numgen random mod {1..3} map @flat-nodeport-endpoints-udp-{1..3}\n"
                + "        no match: ip daddr 172.30.0.60 not in @nodeport-ips\n    end of services"), out);
        // The steps stay one per rule.
        assertEquals(FlatTable.MAX_N, steps(tr, "not in @flat-ips-tcp-").size());
        // Two alike rules are printed as they are.
        TableContent.Builder b = TableContent.builder(IpFamily.IPV4).chain(base("nat-prerouting", "nat", "prerouting", -100));
        for (int n = 1; n <= 3; n++) b.set(new NftSet("s-" + n, List.of("ipv4_addr"), null, List.of(), 0, null));
        for (int n = 1; n <= 2; n++) {
            b.rule(rule("nat-prerouting", List.of(new Match.SetLookup(List.of(Field.DADDR), "s-" + n, false)), go(new Verdict.Drop())));
        }
        String two = trace(b.build()).render();
        assertTrue(two.contains("nat-prerouting: ip daddr @s-1 drop\n"
                + "      no match: ip daddr 203.0.113.1 not in @s-1\n  nat-prerouting: ip daddr @s-2 drop\n"), two);
    }

    @Test
    void flatSingleEndpointDoesNotFork() {
        TableContent t = new FlatTable().service(Protocol.TCP, SVC2, List.of(), 80, 0, List.of("10.180.0.1:8080")).build();
        Trace tr = flat(t, Origin.POD, POD_CLIENT, SVC2, Protocol.TCP, 80);
        assertEquals(1, tr.branches().size());
        assertEquals(List.of(), tr.branches().get(0).choices());
        assertEquals("verdict: DNAT to 10.180.0.1:8080, masquerade: no", lastLine(tr.render()));
        assertTrue(tr.render().contains("DNAT via @flat-endpoints-tcp-1 slot 0 of 1 -> 10.180.0.1:8080 (element 172.30.0.41 . 80 . 0)"),
                tr.render());
    }

    @Test
    void flatExternalIPIsMarkedThenDnated() {
        TableContent t = new FlatTable().service(Protocol.TCP, SVC2, List.of("192.0.2.10"), 80, 0, EP2).build();
        for (Origin o : List.of(Origin.EXTERNAL, Origin.POD)) {
            Trace tr = flat(t, o, o == Origin.POD ? POD_CLIENT : CLIENT, "192.0.2.10", Protocol.TCP, 80);
            Outcome.Dnat d = assertInstanceOf(Outcome.Dnat.class, tr.outcome(), tr.render());
            assertEquals(EP2, d.hostPorts());
            assertEquals(each(2), List.copyOf(tr.dnatOdds().values()));
            for (Outcome.Target target : d.targets()) {
                assertEquals("mark 0x4000 set in services: ip daddr . meta l4proto . th dport @flat-external-ips"
                        + " mark set mark or 0x4000", target.masquerade().reason(), tr.render());
                assertEquals("forwarded", target.delivery());
            }
            // Every branch passed the marking rule once, before the pick.
            assertEquals(tr.branches().size(), steps(tr, "192.0.2.10 . tcp . 80 in @flat-external-ips; mark set to 0x4000").size(),
                    tr.render());
        }
        // The ClusterIP from off the cluster is masqueraded by the skeleton's rule, not by flat-external-ips.
        Trace viaClusterIP = flat(t, Origin.EXTERNAL, CLIENT, SVC2, Protocol.TCP, 80);
        Outcome.Dnat d = assertInstanceOf(Outcome.Dnat.class, viaClusterIP.outcome(), viaClusterIP.render());
        assertEquals("mark 0x4000 set in services: masquerade clusterIP traffic from outside cluster",
                d.targets().get(0).masquerade().reason());
    }

    @Test
    void flatNodePortIsMarkedAndDnatedThroughTheNodePortMap() {
        TableContent t = new FlatTable().service(Protocol.TCP, SVC2, List.of(), 80, 30080, EP2).build();
        Trace tr = flat(t, Origin.EXTERNAL, CLIENT, FlatTable.NODE_IP, Protocol.TCP, 30080);
        Outcome.Dnat d = assertInstanceOf(Outcome.Dnat.class, tr.outcome(), tr.render());
        assertEquals(EP2, d.hostPorts());
        assertEquals(each(2), List.copyOf(tr.dnatOdds().values()));
        assertEquals("yes", d.masqueradeSummary());
        assertEquals("mark 0x4000 set in services: ip daddr @nodeport-ips tcp dport @flat-nodeports-tcp-2 mark set mark or 0x4000",
                d.targets().get(0).masquerade().reason());
        assertTrue(tr.render().contains("tcp dport 30080 in @flat-nodeports-tcp-2; mark set to 0x4000; DNAT via"
                + " @flat-nodeport-endpoints-tcp-2 slot 1 of 2 -> 10.180.0.2:8080 (element 30080 . 1; every slot is traced)"),
                tr.render());
        assertTrue(tr.render().contains("meta l4proto . th dport tcp . 30080 found in @service-nodeports -> continue"), tr.render());
        // The ClusterIP of the same port is not marked from a pod.
        assertEquals("no", ((Outcome.Dnat) flat(t, Origin.POD, POD_CLIENT, SVC2, Protocol.TCP, 80).outcome()).masqueradeSummary());
    }

    @Test
    void flatTcpDportRulesDoNotMatchUdp() {
        // The flat sets' keys hold no protocol (ip . port): only the rule's tcp dport tells TCP from UDP.
        TableContent tcpOnly = new FlatTable().service(Protocol.TCP, SVC2, List.of(), 53, 30053, EP2).build();
        Trace udp = flat(tcpOnly, Origin.POD, POD_CLIENT, SVC2, Protocol.UDP, 53);
        Outcome.Reject r = assertInstanceOf(Outcome.Reject.class, udp.outcome(), udp.render());
        assertEquals("cluster-ips-check", r.chain());
        assertEquals(FlatTable.MAX_N, steps(udp, "no match: tcp dport holds only for tcp packets (nft adds meta l4proto tcp),"
                + " this one is udp").size(), udp.render());
        Trace udpNodePort = flat(tcpOnly, Origin.EXTERNAL, CLIENT, FlatTable.NODE_IP, Protocol.UDP, 30053);
        assertInstanceOf(Outcome.Untouched.class, udpNodePort.outcome(), udpNodePort.render());

        // The same address and port for both protocols: each protocol's rule and map.
        TableContent both = new FlatTable().service(Protocol.TCP, SVC2, List.of(), 53, 0, EP2)
                .service(Protocol.UDP, SVC2, List.of(), 53, 0, List.of("10.180.0.9:53")).build();
        assertEquals(List.of("10.180.0.9:53"), ((Outcome.Dnat) flat(both, Origin.POD, POD_CLIENT, SVC2, Protocol.UDP, 53).outcome()).hostPorts());
        assertEquals(EP2, ((Outcome.Dnat) flat(both, Origin.POD, POD_CLIENT, SVC2, Protocol.TCP, 53).outcome()).hostPorts());
        // Not even a negated lookup holds for the other protocol (nft's l4proto dependency comes first).
        TableContent negated = new FlatTable()
                .rule("nat-prerouting", List.of(new Match.SetLookup(List.of(Field.TCP_DPORT), FlatTable.nodeports(Protocol.TCP, 1), true)),
                        go(new Verdict.Drop()))
                .build();
        assertEquals(Outcome.Kind.DROP, flat(negated, Origin.POD, POD_CLIENT, SVC2, Protocol.TCP, 53).outcome().kind());
        for (Protocol other : List.of(Protocol.UDP, Protocol.SCTP)) {
            assertEquals(Outcome.Kind.UNTOUCHED, flat(negated, Origin.POD, POD_CLIENT, SVC2, other, 53).outcome().kind());
        }
    }

    @Test
    void flatMissingSlotStopsTheRuleAndGoesOnWithTheNextOne() {
        // Slot 1 of a 2-endpoint NodePort has no element: the rule's mark stays, its dnat does nothing, and the
        // next rule (here one that DNATs marked packets elsewhere) runs.
        TableContent t = new FlatTable()
                .element(FlatTable.nodeports(Protocol.TCP, 2), new Value.Port(30080))
                .element(Element.data(FlatTable.nodeportEndpoints(Protocol.TCP, 2), List.of(new Value.Port(30080), new Value.Index(0)),
                        FlatTable.target("10.180.0.1:8080")))
                .rule("services", List.of(new Match.MarkBits(FlatTable.MARK)), new Statement.Dnat(List.of(FlatTable.target("10.0.9.9:9")), true))
                .build();
        Trace tr = flat(t, Origin.EXTERNAL, CLIENT, FlatTable.NODE_IP, Protocol.TCP, 30080);
        Outcome.Dnat d = assertInstanceOf(Outcome.Dnat.class, tr.outcome(), tr.render());
        assertEquals(List.of("10.180.0.1:8080", "10.0.9.9:9"), d.hostPorts());
        assertEquals(each(2), List.copyOf(tr.dnatOdds().values()));
        assertEquals("yes", d.masqueradeSummary());
        assertEquals(List.of("numgen pick 1/2 -> no element in @flat-nodeport-endpoints-tcp-2"), tr.branches().get(1).choices());
        String out = tr.render();
        assertTrue(out.contains("mark set to 0x4000; DNAT via @flat-nodeport-endpoints-tcp-2 slot 1 of 2: no element 30080 . 1,"
                + " so the dnat does nothing and the rule stops (on with the next rule of services); every slot is traced"), out);
        assertTrue(out.contains("mark 0x4000 has 0x4000 set; DNAT to 10.0.9.9:9"), out);

        // A ClusterIP whose slot 2 of 3 is missing: that third of the connections falls through the services
        // chain and is rejected in filter-forward as traffic to a ClusterIP port nothing serves.
        TableContent gap = new FlatTable()
                .element("cluster-ips", FlatTable.addr(SVC3))
                .element(FlatTable.ips(Protocol.TCP, 3), FlatTable.addr(SVC3), new Value.Port(80))
                .element(Element.data(FlatTable.endpoints(Protocol.TCP, 3), List.of(FlatTable.addr(SVC3), new Value.Port(80), new Value.Index(0)),
                        FlatTable.target(EP3.get(0))))
                .element(Element.data(FlatTable.endpoints(Protocol.TCP, 3), List.of(FlatTable.addr(SVC3), new Value.Port(80), new Value.Index(1)),
                        FlatTable.target(EP3.get(1))))
                .build();
        Trace g = flat(gap, Origin.POD, POD_CLIENT, SVC3, Protocol.TCP, 80);
        assertEquals(Outcome.Kind.MIXED, g.outcome().kind(), g.render());
        assertEquals(List.of(EP3.get(0), EP3.get(1)), List.copyOf(g.dnatOdds().keySet()));
        assertEquals(List.of(new Probability(1, 3), new Probability(1, 3)), List.copyOf(g.dnatOdds().values()));
        Trace.Branch third = g.branches().get(2);
        assertEquals(new Probability(1, 3), third.probability());
        assertEquals("cluster-ips-check", assertInstanceOf(Outcome.Reject.class, third.outcome()).chain());
        assertEquals(Probability.ONE, total(g));
    }

    @Test
    void flatNoEndpointContinueReachesTheMembershipRuleAndIsRejected() {
        TableContent t = new FlatTable().noEndpoints(Protocol.TCP, "172.30.0.60", 80, 30090, new Verdict.Continue()).build();
        Trace tr = flat(t, Origin.POD, POD_CLIENT, "172.30.0.60", Protocol.TCP, 80);
        Outcome.Reject r = assertInstanceOf(Outcome.Reject.class, tr.outcome(), tr.render());
        assertEquals("reject-chain", r.chain());
        String out = tr.render();
        assertTrue(out.contains("ip daddr . meta l4proto . th dport 172.30.0.60 . tcp . 80 found in @no-endpoint-services"
                + " (ns/svc:tcp has no endpoints) -> continue (on with the next rule of service-endpoints-check)"), out);
        assertTrue(out.contains("service-endpoints-check: ip daddr . meta l4proto . th dport @no-endpoint-services goto reject-chain\n"
                + "        ip daddr . meta l4proto . th dport 172.30.0.60 . tcp . 80 in @no-endpoint-services (a map used as a set:"
                + " membership only, its element's continue is not applied); goto reject-chain"), out);
        // A port of the same address without a no-endpoint element is not in the map used as a set either.
        Trace other = flat(t, Origin.POD, POD_CLIENT, "172.30.0.60", Protocol.TCP, 81);
        assertEquals("cluster-ips-check", assertInstanceOf(Outcome.Reject.class, other.outcome(), other.render()).chain());
        assertTrue(other.render().contains("172.30.0.60 . tcp . 81 not in @no-endpoint-services (a map used as a set: membership only)"),
                other.render());

        Trace nodePort = flat(t, Origin.EXTERNAL, CLIENT, FlatTable.NODE_IP, Protocol.TCP, 30090);
        Outcome.Reject nr = assertInstanceOf(Outcome.Reject.class, nodePort.outcome(), nodePort.render());
        assertEquals("reject-chain", nr.chain());
        assertTrue(nodePort.render().contains("found in @no-endpoint-nodeports (ns/svc:tcp has no endpoints) -> continue"
                + " (on with the next rule of nodeport-endpoints-check)"), nodePort.render());
    }

    @Test
    void flatNoEndpointDropStillDrops() {
        TableContent t = new FlatTable().noEndpoints(Protocol.UDP, "172.30.0.61", 53, 30091, new Verdict.Drop()).build();
        Trace tr = flat(t, Origin.POD, POD_CLIENT, "172.30.0.61", Protocol.UDP, 53);
        Outcome.Drop d = assertInstanceOf(Outcome.Drop.class, tr.outcome(), tr.render());
        assertEquals("service-endpoints-check", d.chain());
        assertEquals("no-endpoint-services element 172.30.0.61 . udp . 53 : drop", d.rule());
        assertTrue(tr.allSteps().stream().noneMatch(s -> "reject-chain".equals(s.chain())), tr.render());
        Trace nodePort = flat(t, Origin.EXTERNAL, CLIENT, FlatTable.NODE_IP, Protocol.UDP, 30091);
        assertEquals("nodeport-endpoints-check", assertInstanceOf(Outcome.Drop.class, nodePort.outcome(), nodePort.render()).chain());
    }

    @Test
    void continueVerdictGoesOnWithTheNextRule() {
        // Before the flat layout, continue fell into the tracer's default and acted as return.
        TableContent t = TableContent.builder(IpFamily.IPV4)
                .chain(base("nat-prerouting", "nat", "prerouting", -100))
                .chain(Chain.regular("c"))
                .rule(rule("nat-prerouting", List.of(), go(new Verdict.Jump("c"))))
                .rule(rule("c", List.of(), go(new Verdict.Continue())))
                .rule(rule("c", List.of(), new Statement.Dnat(List.of(new Statement.Target(IpAddress.parse("10.0.2.1"), 8080)), true)))
                .build();
        Trace tr = trace(t);
        assertEquals(List.of("10.0.2.1:8080"), assertInstanceOf(Outcome.Dnat.class, tr.outcome(), tr.render()).hostPorts());
        assertTrue(tr.render().contains("continue (on with the next rule of c)"), tr.render());
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
