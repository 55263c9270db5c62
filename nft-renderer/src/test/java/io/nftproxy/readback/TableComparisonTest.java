package io.nftproxy.readback;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Field;
import io.nftproxy.nft.Match;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Statement;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Value;
import io.nftproxy.nft.Verdict;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;

class TableComparisonTest {
    private static final Chain NAT = new Chain("nat-output", new Chain.Hook("nat", "output", -100), null);
    private static final Chain REJECT = new Chain("reject-chain", null, "helper");
    private static final NftSet IPS = new NftSet("service-ips", List.of("ipv4_addr", "inet_proto", "inet_service"), "verdict",
            List.of(), 0, "dispatch");
    private static final NftSet AFF = new NftSet("affinity-x", List.of("ipv4_addr"), null, List.of("dynamic", "timeout"), 600, null);

    @Test
    void equalTablesHaveNoDifferences() {
        assertEquals(List.of(), TableComparison.diff(table(b -> {}), table(b -> {})));
    }

    @Test
    void chains() {
        TableContent e = table(b -> b.chain(Chain.regular("gone")));
        TableContent a = table(b -> b.chain(Chain.regular("new")), new Chain("nat-output", new Chain.Hook("nat", "output", -110), null),
                new Chain("reject-chain", null, "other"));
        assertEquals(List.of(
                "chain nat-output: expected type nat hook output priority -100, actual type nat hook output priority -110",
                "chain reject-chain: expected comment \"helper\", actual \"other\"",
                "missing chain gone (0 rules)",
                "extra chain new (0 rules)"), TableComparison.diff(e, a));
    }

    @Test
    void chainCommentsOnOneSideCanBeTolerated() {
        TableContent a = table(b -> {}, NAT, Chain.regular("reject-chain"));
        assertEquals(List.of("chain reject-chain: expected comment \"helper\", actual (none)"), TableComparison.diff(table(b -> {}), a));
        assertEquals(List.of(), TableComparison.diff(table(b -> {}), a, Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED)));
        TableContent other = table(b -> {}, NAT, new Chain("reject-chain", null, "other"));
        assertEquals(1, TableComparison.diff(table(b -> {}), other, Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED)).size());
    }

    @Test
    void rulesInOrder() {
        Rule r1 = decide("services", "a"), r2 = decide("services", "b"), r3 = decide("services", "c");
        Rule foreign = new Rule("services", List.of(new Match.CtStateNew()), List.of(new Statement.Reject()), null);
        TableContent e = table(b -> rules(b, r1, r2, r3));
        assertEquals(List.of("chain services: extra rule at 1: `ct state new reject`"),
                TableComparison.diff(e, table(b -> rules(b, r1, foreign, r2, r3))));
        assertEquals(List.of("chain services: missing rule 1: `goto b`"), TableComparison.diff(e, table(b -> rules(b, r1, r3))));
        assertEquals(List.of("chain services rule 1: expected `goto b`, actual `ct state new reject`"),
                TableComparison.diff(e, table(b -> rules(b, r1, foreign, r3))));
        assertEquals(List.of("chain services: extra rule at 0: `goto c`", "chain services: missing rule 2: `goto c`"),
                TableComparison.diff(e, table(b -> rules(b, r3, r1, r2))));
    }

    @Test
    void addressSetsCompareAsTheKernelStoresThem() {
        Rule model = addrRule("192.0.2.10", "203.0.113.0/24", "192.0.2.0/25", "10.0.1.0/24", "10.0.0.0/24");
        Rule kernel = addrRule("10.0.0.0/23", "192.0.2.0/25", "203.0.113.0/24");
        assertEquals(List.of(), TableComparison.diff(table(b -> rules(b, model)), table(b -> rules(b, kernel))));
        Rule narrower = addrRule("10.0.0.0/24", "192.0.2.0/25", "203.0.113.0/24");
        assertEquals(List.of("chain services rule 0: expected `ip saddr != { 192.0.2.10, 203.0.113.0/24, 192.0.2.0/25, 10.0.1.0/24, "
                        + "10.0.0.0/24 } drop`, actual `ip saddr != { 10.0.0.0/24, 192.0.2.0/25, 203.0.113.0/24 } drop`"),
                TableComparison.diff(table(b -> rules(b, model)), table(b -> rules(b, narrower))));
    }

    @Test
    void sets() {
        NftSet changed = new NftSet("service-ips", List.of("ipv4_addr", "inet_service"), "verdict", List.of("interval"), 5, "x");
        TableContent e = table(b -> b.set(AFF));
        TableContent a = table(b -> b.set(new NftSet("affinity-x", List.of("ipv4_addr"), null, List.of("timeout", "dynamic"), 600, null))
                .set(new NftSet("stray", List.of("ipv4_addr"), null, List.of(), 0, null)), changed);
        assertEquals(List.of(
                "map service-ips: expected type ipv4_addr . inet_proto . inet_service : verdict, actual ipv4_addr . inet_service : verdict",
                "map service-ips: expected flags [], actual [interval]",
                "map service-ips: expected timeout 0s, actual 5s",
                "map service-ips: expected comment \"dispatch\", actual \"x\"",
                "extra set stray (0 elements)"), TableComparison.diff(e, a));
        assertEquals(List.of("missing set affinity-x (0 elements)"), TableComparison.diff(e, table(b -> {})));
    }

    @Test
    void elements() {
        Element web = ipsElement("10.96.0.10", 80, new Verdict.Goto("reject-chain"), null);
        Element dns = ipsElement("10.96.0.53", 53, new Verdict.Goto("reject-chain"), "kube-system/dns");
        Element gone = ipsElement("10.96.0.99", 443, new Verdict.Drop(), null);
        TableContent e = table(b -> b.element(web).element(dns).element(gone));
        TableContent a = table(b -> b.element(ipsElement("10.96.0.10", 80, new Verdict.Drop(), null))
                .element(ipsElement("10.96.0.53", 53, new Verdict.Goto("reject-chain"), null))
                .element(ipsElement("10.96.0.7", 8080, new Verdict.Drop(), "x")));
        assertEquals(List.of(
                "element service-ips { 10.96.0.10 . tcp . 80 }: expected : goto reject-chain, actual : drop",
                "element service-ips { 10.96.0.53 . tcp . 53 }: expected comment \"kube-system/dns\" : goto reject-chain, actual : goto reject-chain",
                "missing element service-ips { 10.96.0.99 . tcp . 443 : drop }",
                "extra element service-ips { 10.96.0.7 . tcp . 8080 comment \"x\" : drop }"), TableComparison.diff(e, a));
    }

    @Test
    void families() {
        assertEquals(List.of("family: expected ip, actual ip6"),
                TableComparison.diff(TableContent.builder(IpFamily.IPV4).build(), TableContent.builder(IpFamily.IPV6).build()));
    }

    // ---- helpers: a small table with nat-output, reject-chain, services, and service-ips; edits on top ----

    private static TableContent table(Consumer<TableContent.Builder> edit, Object... overrides) {
        TableContent.Builder b = TableContent.builder(IpFamily.IPV4);
        Chain nat = NAT, reject = REJECT;
        NftSet ips = IPS;
        for (Object o : overrides) {
            if (o instanceof Chain c && c.name().equals("nat-output")) nat = c;
            else if (o instanceof Chain c && c.name().equals("reject-chain")) reject = c;
            else if (o instanceof NftSet s) ips = s;
        }
        b.chain(nat).chain(reject).chain(Chain.regular("services"));
        for (String t : List.of("a", "b", "c")) b.chain(Chain.regular(t));
        b.set(ips);
        edit.accept(b);
        return b.build();
    }

    private static void rules(TableContent.Builder b, Rule... rs) { for (Rule r : rs) b.rule(r); }

    private static Rule decide(String chain, String target) {
        return new Rule(chain, List.of(), List.of(new Statement.Decide(new Verdict.Goto(target))), null);
    }

    private static Rule addrRule(String... prefixes) {
        List<IpPrefix> p = Arrays.stream(prefixes).map(IpPrefix::parse).toList();
        return new Rule("services", List.of(new Match.AddrIn(Field.SADDR, true, p)), List.of(new Statement.Decide(new Verdict.Drop())), null);
    }

    private static Element ipsElement(String ip, int port, Verdict v, String comment) {
        return new Element("service-ips", List.of(new Value.Addr(IpAddress.parse(ip)), new Value.Proto(Protocol.TCP), new Value.Port(port)), v, comment);
    }
}
