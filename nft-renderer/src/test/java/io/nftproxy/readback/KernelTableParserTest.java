package io.nftproxy.readback;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Field;
import io.nftproxy.nft.Match;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Statement;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.UnrecognisedRuleException;
import io.nftproxy.nft.Value;
import io.nftproxy.nft.Verdict;

import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Against listings captured from a real kernel (see src/test/resources/kernel-json/README.md). */
class KernelTableParserTest {
    private static final int MARK = 0x4000;

    @Test
    void skeletonAndLoadBalancerForms() throws Exception {
        TableContent t = parseResource("lb-firewall-etp-local.ip.json");
        assertEquals(IpFamily.IPV4, t.family());
        assertEquals(new Chain.Hook("nat", "output", -100), t.chain("nat-output").hook());
        assertEquals(new Chain.Hook("filter", "prerouting", -110), t.chain("filter-prerouting-pre-dnat").hook());
        assertEquals(new Chain.Hook("nat", "postrouting", 100), t.chain("nat-postrouting").hook());
        assertNull(t.chain("services").hook());

        assertEquals(List.of(
                rule("services", List.of(new Match.SetLookup(List.of(Field.DADDR), "cluster-ips", false),
                                new Match.AddrIn(Field.SADDR, true, p("10.244.0.0/16"))),
                        List.of(new Statement.MarkOr(MARK)), "masquerade clusterIP traffic from outside cluster"),
                rule("services", List.of(), List.of(new Statement.VmapLookup(List.of(Field.DADDR, Field.L4PROTO, Field.DPORT), "service-ips")), null),
                rule("services", List.of(new Match.SetLookup(List.of(Field.DADDR), "nodeport-ips", false)),
                        List.of(new Statement.VmapLookup(List.of(Field.L4PROTO, Field.DPORT), "service-nodeports")), null)),
                t.rules("services"));
        assertEquals(List.of(
                rule("masquerading", List.of(new Match.MarkBits(MARK)), List.of(new Statement.MarkXor(MARK), new Statement.Masquerade()), null),
                rule("masquerading", List.of(new Match.CtStatusDnat(), new Match.SetLookup(
                        List.of(Field.SADDR, Field.DADDR, Field.L4PROTO, Field.DPORT), "hairpin-connections", false)),
                        List.of(new Statement.Masquerade()), null)),
                t.rules("masquerading"));
        assertEquals(rule("filter-input", List.of(new Match.CtStateNew()), List.of(new Statement.Decide(new Verdict.Jump("nodeport-endpoints-check"))), null),
                t.rules("filter-input").get(0));
        assertEquals(List.of(new Statement.Reject()), t.rules("cluster-ips-check").get(0).statements());
        assertEquals(new Match.AddrIn(Field.DADDR, false, p("10.96.0.0/16")), t.rules("cluster-ips-check").get(1).matches().get(0));

        String svc = "service-UI5RBLQN-prod/lb/tcp/https";
        assertEquals(List.of(new Match.ProtoIs(Protocol.TCP)), t.rules(svc).get(0).matches());
        assertEquals(new Statement.Dnat(List.of(target("10.244.1.5", 8443), target("10.244.2.7", 8443)), false),
                t.rules(svc).get(0).statements().get(0));
        String ext = "external-UI5RBLQN-prod/lb/tcp/https";
        assertEquals(List.of(new Match.FibLocal(Field.SADDR)), t.rules(ext).get(1).matches());
        assertEquals("masquerade local traffic", t.rules(ext).get(1).comment());
        // The kernel returns the anonymous set sorted: the model's order is not kept (TableComparison knows).
        assertEquals(rule("firewall-UI5RBLQN-prod/lb/tcp/https",
                        List.of(new Match.AddrIn(Field.SADDR, true, p("192.0.2.10", "192.168.0.0/24", "198.51.100.0/24", "203.0.113.0/24"))),
                        List.of(new Statement.Decide(new Verdict.Drop())), null),
                t.rules("firewall-UI5RBLQN-prod/lb/tcp/https").get(0));

        NftSet serviceIps = t.set("service-ips");
        assertEquals(new NftSet("service-ips", List.of("ipv4_addr", "inet_proto", "inet_service"), "verdict", List.of(), 0,
                "ClusterIP, ExternalIP and LoadBalancer IP traffic"), serviceIps);
        assertEquals(new Element("service-ips", List.of(addr("192.0.2.10"), new Value.Proto(Protocol.TCP), new Value.Port(443)),
                new Verdict.Goto(ext), null), t.element("service-ips", List.of(addr("192.0.2.10"), new Value.Proto(Protocol.TCP), new Value.Port(443))));
        assertEquals(2, t.elements("nodeport-ips").size());
        assertNotNull(t.element("hairpin-connections", List.of(addr("10.244.1.5"), addr("10.244.1.5"), new Value.Proto(Protocol.TCP), new Value.Port(8443))));
    }

    @Test
    void affinityForms() throws Exception {
        TableContent t = parseResource("session-affinity.ip.json");
        String set = "affinity-6SFGLI2F-default/sticky/tcp/__10.244.1.5/8080";
        String ep = "endpoint-6SFGLI2F-default/sticky/tcp/__10.244.1.5/8080";
        // nft 1.0.6 prints ["timeout"] and a size of 65535 for "flags dynamic,timeout".
        assertEquals(new NftSet(set, List.of("ipv4_addr"), null, List.of("dynamic", "timeout"), 600, null), t.set(set));
        assertEquals(List.of(
                rule(ep, List.of(), List.of(new Statement.UpdateSet(set, Field.SADDR)), null),
                rule(ep, List.of(new Match.ProtoIs(Protocol.TCP)), List.of(new Statement.Dnat(List.of(target("10.244.1.5", 8080)), true)), null)),
                t.rules(ep));
        List<Rule> svc = t.rules("service-EDE2N7RF-default/sticky/tcp/");
        assertEquals(List.of(new Match.SetLookup(List.of(Field.SADDR), set, false)), svc.get(0).matches());
        assertEquals(new Statement.NumgenVmap(List.of(new Verdict.Goto(ep),
                new Verdict.Goto("endpoint-RW4BNBPC-default/sticky/tcp/__10.244.2.7/8080"))), svc.get(2).statements().get(0));
    }

    @Test
    void noEndpointFormsWithElementCommentsAndMatchAllNodePorts() throws Exception {
        TableContent t = parseResource("no-endpoints.ip.json");
        assertEquals(new Element("no-endpoint-nodeports", List.of(new Value.Proto(Protocol.TCP), new Value.Port(30060)),
                new Verdict.Goto("reject-chain"), "default/empty:web"), t.elements("no-endpoint-nodeports").values().iterator().next());
        assertEquals(List.of(new Match.FibLocal(Field.DADDR), new Match.AddrIn(Field.DADDR, true, p("127.0.0.0/8"))),
                t.rules("services").get(2).matches());
        assertNull(t.set("nodeport-ips"));
        // nft 1.0.6 leaves chain comments out of JSON.
        assertNull(t.chain("reject-chain").comment());
    }

    @Test
    void ipv6Forms() throws Exception {
        TableContent t = parseResource("dual-stack.ip6.json");
        assertEquals(IpFamily.IPV6, t.family());
        assertEquals(List.of(new Statement.Reject()), t.rules("reject-chain").get(0).statements());
        assertEquals(new Statement.Dnat(List.of(target("fd00:10:244:1::9", 5353)), true),
                t.rules("endpoint-UPPTQ6DY-default/ds-sticky/udp/__fd00.10.244.1..9/5353").get(1).statements().get(0));
        assertEquals(new Match.AddrIn(Field.SADDR, true, p("2001:db8:1::/48")),
                t.rules("firewall-KOVATALP-default/ds-sticky/udp/").get(0).matches().get(0));
    }

    /** The fast layout's cascade: {@code numgen random mod K 0} matches before direct DNATs and gotos. */
    @Test
    void fastLayoutCascadeForms() throws Exception {
        TableContent t = parseResource("fast-clusterip.ip.json");
        String svc = "service-ULMVA6XW-ns1/svc1/tcp/p80";
        Match tcp = new Match.ProtoIs(Protocol.TCP);
        assertEquals(List.of(
                rule(svc, List.of(tcp, new Match.NumgenIs(3, 0)), List.of(new Statement.Dnat(List.of(target("10.0.1.2", 8080)), true)), null),
                rule(svc, List.of(tcp, new Match.NumgenIs(2, 0)), List.of(new Statement.Dnat(List.of(target("10.0.2.12", 8080)), true)), null),
                rule(svc, List.of(tcp), List.of(new Statement.Dnat(List.of(target("10.0.2.3", 8080)), true)), null)),
                t.rules(svc));

        TableContent a = parseResource("fast-session-affinity.ip.json");
        List<Rule> sticky = a.rules("service-4MXLGZVK-demo/hello-sticky/tcp/http");
        assertEquals(4, sticky.size());
        assertEquals(rule(sticky.get(0).chain(), List.of(new Match.NumgenIs(2, 0)),
                List.of(new Statement.Decide(new Verdict.Goto("endpoint-EZFSKB6A-demo/hello-sticky/tcp/http__10.0.1.62/8080"))), null),
                sticky.get(2));
        assertEquals(List.of(), sticky.get(3).matches());

        TableContent v6 = parseResource("fast-dual-stack.ip6.json");
        assertEquals(List.of(tcp, new Match.NumgenIs(2, 0)), v6.rules("service-77WF6TB4-demo/hello-dual/tcp/http").get(0).matches());
        assertEquals(new Statement.Dnat(List.of(target("fd00:10::1:3d", 8080)), true),
                v6.rules("service-77WF6TB4-demo/hello-dual/tcp/http").get(0).statements().get(0));
    }

    /**
     * The flat layout: data maps whose {@code typeof} the listing loses (rebuilt from the DNAT that reads each), the
     * DNAT through a named map with no {@code addr . port}, protocol-bound ports, {@code continue} elements and a
     * verdict map read as a set. The read-back must equal the rendered table object for object, declarations
     * included, or every sync after a read-back would recreate the maps.
     */
    @Test
    void flatLayoutForms() throws Exception {
        for (String name : List.of("loadbalancer", "clusterip-no-endpoints")) {
            TableContent kernel = parseResource("flat-" + (name.equals("loadbalancer") ? "loadbalancer" : "no-endpoints") + ".ip.json");
            TableContent rendered = flatRendering(name);
            assertEquals(List.of(), TableComparison.diff(rendered, kernel,
                    Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED)), name);
            assertEquals(rendered.sets(), kernel.sets(), name + ": every declaration, typeof included");
            for (NftSet set : rendered.sets().values()) {
                assertEquals(rendered.elements(set.name()), kernel.elements(set.name()), name + " " + set.name());
            }
        }
        TableContent t = parseResource("flat-loadbalancer.ip.json");
        assertEquals(new NftSet.Typeof(List.of(Field.DADDR, Field.TCP_DPORT), 2, List.of(Field.DADDR, Field.TCP_DPORT)),
                t.set("flat-endpoints-tcp-2").typeof());
        assertEquals(new NftSet.Typeof(List.of(Field.UDP_DPORT), 16, List.of(Field.DADDR, Field.UDP_DPORT)),
                t.set("flat-nodeport-endpoints-udp-16").typeof());
        // The element comment of a data-map element comes back, as on every other flat element (issue 24).
        assertEquals(new Element("flat-endpoints-tcp-2", List.of(addr("172.30.232.108"), new Value.Port(80), new Value.Index(1)),
                null, "demo/hello-lb:http", target("10.0.2.170", 8080)), t.element("flat-endpoints-tcp-2",
                List.of(addr("172.30.232.108"), new Value.Port(80), new Value.Index(1))));
        assertEquals(new Verdict.Continue(), t.element("service-nodeports", List.of(new Value.Proto(Protocol.TCP), new Value.Port(31950))).value());
        assertTrue(t.rules("services").stream().anyMatch(r -> r.statements().equals(List.of(
                new Statement.DnatMap(List.of(Field.DADDR, Field.TCP_DPORT), 2, "flat-endpoints-tcp-2")))));
    }

    /** A data map whose DNAT rule is gone cannot be declared as ours: it differs, as its missing rule does. */
    @Test
    void flatDataMapWithoutItsRuleDiffers() throws Exception {
        String json = resource("flat-loadbalancer.ip.json");
        String rule = json.substring(json.lastIndexOf("{\"rule\"", json.indexOf("\"data\": \"@flat-endpoints-tcp-2\"")));
        rule = rule.substring(0, rule.indexOf("}}}}]}}") + "}}}}]}}".length());
        String without = json.replace(", " + rule, "");
        assertTrue(without.length() < json.length(), "the DNAT rule was cut out");
        TableContent t = KernelTableParser.parse(without);
        assertNull(t.set("flat-endpoints-tcp-2").typeof());
        assertEquals(4, t.elements("flat-endpoints-tcp-2").size(), "its elements are still read");
        assertTrue(TableComparison.diff(flatRendering("loadbalancer"), t).stream()
                .anyMatch(d -> d.startsWith("chain services: missing rule")));
    }

    /** A DNAT through a map keyed by {@code th dport} or through a verdict map is not a form we write. */
    @Test
    void flatDnatFormsWeNeverWriteAreNotOurs() throws Exception {
        String json = resource("flat-loadbalancer.ip.json");
        String tcp = "{\"numgen\": {\"mode\": \"random\", \"mod\": 2, \"offset\": 0}}]}, \"data\": \"@flat-endpoints-tcp-2\"";
        String key = "{\"payload\": {\"protocol\": \"tcp\", \"field\": \"dport\"}}, " + tcp;
        assertTrue(json.contains(key), "capture holds the DNAT");
        UnrecognisedRuleException e = assertThrows(UnrecognisedRuleException.class,
                () -> KernelTableParser.parse(json.replace(key, key.replace("\"tcp\"", "\"th\""))));
        assertTrue(e.getMessage().contains("dnat map key not ending in a protocol's port"), e.getMessage());
        e = assertThrows(UnrecognisedRuleException.class,
                () -> KernelTableParser.parse(json.replace(tcp, tcp.replace("@flat-endpoints-tcp-2", "@service-ips"))));
        assertTrue(e.getMessage().contains("dnat through service-ips, not one of our data maps"), e.getMessage());
    }

    private static TableContent flatRendering(String scenario) {
        io.nftproxy.render.GoldenScenarios.Scenario s = io.nftproxy.render.GoldenScenarios.all().stream()
                .filter(x -> x.name().equals(scenario)).findFirst().orElseThrow();
        return new io.nftproxy.render.Renderer(io.nftproxy.render.TableLayout.FLAT).render(s.snapshot(), s.node()).table(IpFamily.IPV4);
    }

    @Test
    void numgenMatchesOtherThanEqualityAreNotOurs() throws Exception {
        String json = resource("fast-clusterip.ip.json");
        String eq = "{\"match\": {\"op\": \"==\", \"left\": {\"numgen\": {\"mode\": \"random\", \"mod\": 3, \"offset\": 0}}, \"right\": 0}}";
        assertTrue(json.contains(eq), "capture holds the numgen match");
        UnrecognisedRuleException e = assertThrows(UnrecognisedRuleException.class,
                () -> KernelTableParser.parse(json.replace(eq, eq.replace("\"==\"", "\"!=\""))));
        assertTrue(e.getMessage().contains("numgen !="), e.getMessage());
        e = assertThrows(UnrecognisedRuleException.class,
                () -> KernelTableParser.parse(json.replace(eq, eq.replace("\"right\": 0", "\"right\": 3"))));
        assertTrue(e.getMessage().contains("numgen value 3 outside 0..2"), e.getMessage());
    }

    /** Writing the read-back table again gives the rules and elements of the script that was loaded. */
    @Test
    void readBackWritesTheLoadedScript() throws Exception {
        for (String name : List.of("session-affinity.ip", "no-endpoints.ip", "dual-stack.ip6", "lb-firewall-etp-local.ip",
                "fast-clusterip.ip", "fast-session-affinity.ip", "fast-dual-stack.ip6", "flat-loadbalancer.ip", "flat-no-endpoints.ip")) {
            TableContent t = parseResource(name + ".json");
            Set<String> loaded = rulesAndElements(resource(name + ".nft"));
            Set<String> written = rulesAndElements(Transaction.creating(t).script(Capabilities.baseline()));
            if (name.startsWith("lb-")) {
                // The one line that differs: the kernel sorted the anonymous set.
                String fw = "add rule ip kube-proxy firewall-UI5RBLQN-prod/lb/tcp/https ip saddr != ";
                assertTrue(loaded.remove(fw + "{ 203.0.113.0/24, 198.51.100.0/24, 192.168.0.0/24, 192.0.2.10 } drop"));
                assertTrue(written.remove(fw + "{ 192.0.2.10, 192.168.0.0/24, 198.51.100.0/24, 203.0.113.0/24 } drop"));
            }
            assertEquals(loaded, written, name);
        }
    }

    @Test
    void packetPathAffinityEntriesAreNotTableContent() throws Exception {
        String json = resource("session-affinity.ip.json").replace(
                "\"flags\": [\"timeout\"], \"timeout\": 600}",
                "\"flags\": [\"timeout\"], \"timeout\": 600, \"elem\": [{\"elem\": {\"val\": \"10.0.0.1\", \"expires\": 599}}]}");
        assertTrue(json.contains("\"expires\": 599"));
        TableContent t = KernelTableParser.parse(json);
        assertTrue(TableComparison.diff(parseResource("session-affinity.ip.json"), t).isEmpty());
    }

    @Test
    void mergedRangesAreSplitIntoPrefixes() throws Exception {
        String json = resource("no-endpoints.ip.json").replace(
                "\"right\": {\"prefix\": {\"addr\": \"10.96.0.0\", \"len\": 16}}",
                "\"right\": {\"set\": [{\"range\": [\"10.0.0.0\", \"10.0.2.255\"]}, \"10.9.0.1\"]}");
        TableContent t = KernelTableParser.parse(json);
        assertEquals(new Match.AddrIn(Field.DADDR, false, p("10.0.0.0/23", "10.0.2.0/24", "10.9.0.1")),
                t.rules("cluster-ips-check").get(1).matches().get(0));
    }

    @Test
    void foreignContentIsReportedWithEveryItem() throws Exception {
        String json = resource("no-endpoints.ip.json")
                .replace("\"chain\": \"nat-prerouting\", \"handle\": 31, \"expr\": [",
                        "\"chain\": \"nat-prerouting\", \"handle\": 31, \"expr\": [{\"counter\": {\"packets\": 0, \"bytes\": 0}}, ")
                .replace("\"name\": \"filter-input\", \"handle\": 10, \"type\": \"filter\", \"hook\": \"input\", \"prio\": 0, \"policy\": \"accept\"",
                        "\"name\": \"filter-input\", \"handle\": 10, \"type\": \"filter\", \"hook\": \"input\", \"prio\": 0, \"policy\": \"drop\"")
                .replace("\"comment\": \"Active ClusterIPs\"", "\"comment\": \"Active ClusterIPs\", \"gc-interval\": 5")
                .replace("\"right\": \"@cluster-ips\"}}, {\"reject\": {\"type\": \"icmp\", \"expr\": \"port-unreachable\"}}",
                        "\"right\": \"@cluster-ips\"}}, {\"reject\": {\"type\": \"tcp reset\"}}")
                .replace("]}\n", ", {\"flowtable\": {\"family\": \"ip\", \"name\": \"f\", \"table\": \"kube-proxy\", \"handle\": 99}}]}\n");
        UnrecognisedRuleException e = assertThrows(UnrecognisedRuleException.class, () -> KernelTableParser.parse(json));
        List<String> where = e.items().stream().map(UnrecognisedRuleException.Item::where).toList();
        assertEquals(List.of("set cluster-ips", "chain filter-input", "chain nat-prerouting rule 0 (handle 31)",
                "chain cluster-ips-check rule 0 (handle 39)", "flowtable f"), where, e.getMessage());
        assertTrue(e.getMessage().contains("statement counter"), e.getMessage());
        assertTrue(e.getMessage().contains("{\"counter\": {\"packets\": 0, \"bytes\": 0}}"), e.getMessage());
        assertTrue(e.getMessage().contains("base chain policy drop"), e.getMessage());
        assertTrue(e.getMessage().contains("unknown properties [gc-interval]"), e.getMessage());
        assertEquals(List.of("chain nat-prerouting: missing rule 0: `jump services`",
                        "chain cluster-ips-check: missing rule 0: `ip daddr @cluster-ips reject comment \"Reject traffic to invalid ports of ClusterIPs\"`"),
                TableComparison.diff(parseResource("no-endpoints.ip.json"), e.partialTable()));
    }

    @Test
    void partialTableKeepsWhatWasUnderstood() throws Exception {
        String json = resource("no-endpoints.ip.json").replace(
                "\"chain\": \"nat-prerouting\", \"handle\": 31, \"expr\": [",
                "\"chain\": \"nat-prerouting\", \"handle\": 31, \"expr\": [{\"counter\": {\"packets\": 0, \"bytes\": 0}}, ");
        UnrecognisedRuleException e = assertThrows(UnrecognisedRuleException.class, () -> KernelTableParser.parse(json));
        assertEquals(1, e.items().size());
        TableContent full = parseResource("no-endpoints.ip.json");
        assertEquals(List.of("chain nat-prerouting: missing rule 0: `jump services`"),
                TableComparison.diff(full, e.partialTable()));
    }

    @Test
    void documentsThatAreNotAListingAreRejected() {
        assertThrows(Json.JsonException.class, () -> KernelTableParser.parse("{\"nftables\": ["));
        assertMessage("{}", "not an nft JSON listing: no \"nftables\" array");
        assertMessage("[]", "not an nft JSON listing: document is not an object: []");
        assertMessage("{\"nftables\": [{\"metainfo\": {\"json_schema_version\": 2}}]}", "unsupported nft JSON schema 2");
        assertMessage("{\"nftables\": [{\"metainfo\": {\"json_schema_version\": 1}}]}", "no table in the listing");
        assertMessage("{\"nftables\": [{\"table\": {\"family\": \"ip\", \"name\": \"filter\", \"handle\": 1}}]}",
                "table filter is not kube-proxy");
        assertMessage("{\"nftables\": [{\"table\": {\"family\": \"inet\", \"name\": \"kube-proxy\", \"handle\": 1}}]}",
                "table family inet is neither ip nor ip6");
        assertMessage("{\"nftables\": [{\"table\": {\"family\": \"ip\", \"name\": \"kube-proxy\"}}, "
                        + "{\"chain\": {\"family\": \"ip6\", \"table\": \"kube-proxy\", \"name\": \"c\"}}]}",
                "chain of another table: {\"family\": \"ip6\", \"table\": \"kube-proxy\", \"name\": \"c\"}");
    }

    private static void assertMessage(String json, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KernelTableParser.parse(json));
        assertEquals(message, e.getMessage());
    }

    private static Set<String> rulesAndElements(String script) {
        Set<String> out = new TreeSet<>();
        script.lines().filter(l -> l.startsWith("add rule ") || l.startsWith("add element ")).forEach(out::add);
        return out;
    }

    static TableContent parseResource(String name) throws Exception {
        return KernelTableParser.parse(resource(name));
    }

    static String resource(String name) throws IOException {
        try (InputStream in = KernelTableParserTest.class.getResourceAsStream("/kernel-json/" + name)) {
            if (in == null) throw new IOException("no test resource " + name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static Rule rule(String chain, List<Match> m, List<Statement> s, String comment) {
        return new Rule(chain, m, s, comment);
    }

    private static Statement.Target target(String ip, int port) { return new Statement.Target(IpAddress.parse(ip), port); }

    private static Value addr(String ip) { return new Value.Addr(IpAddress.parse(ip)); }

    private static List<IpPrefix> p(String... s) { return Arrays.stream(s).map(IpPrefix::parse).toList(); }
}
