package io.nftproxy.trace;

import io.nftproxy.TestAddresses;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;
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

import java.util.ArrayList;
import java.util.List;

/**
 * A hand-built IPv4 table in the shape of the {@code flat} layout, written without the
 * renderer so the tracer's semantics are pinned on their own: the skeleton's chains and base rules, the per-protocol,
 * per-endpoint-count sets and maps for N in 1..{@link #MAX_N}, and helpers that add a simple service port's elements.
 * Rules and elements can be added before {@link #build()}; a rule added to a chain goes after the skeleton's rules.
 */
final class FlatTable {
    static final int MARK = 0x4000;
    static final int MAX_N = 3;
    static final String NODE_IP = TestAddresses.NODE_IP;

    private final TableContent.Builder b = TableContent.builder(IpFamily.IPV4);

    FlatTable() {
        for (String s : List.of("cluster-ips", "nodeport-ips")) b.set(new NftSet(s, List.of("ipv4_addr"), null, List.of(), 0, null));
        b.set(new NftSet("hairpin-connections", List.of("ipv4_addr", "ipv4_addr", "inet_proto", "inet_service"), null, List.of(), 0, null));
        for (String m : List.of("service-ips", "no-endpoint-services")) {
            b.set(new NftSet(m, List.of("ipv4_addr", "inet_proto", "inet_service"), "verdict", List.of(), 0, null));
        }
        for (String m : List.of("service-nodeports", "no-endpoint-nodeports")) {
            b.set(new NftSet(m, List.of("inet_proto", "inet_service"), "verdict", List.of(), 0, null));
        }
        b.set(new NftSet("flat-external-ips", List.of("ipv4_addr", "inet_proto", "inet_service"), null, List.of(), 0, null));
        for (Protocol p : List.of(Protocol.TCP, Protocol.UDP)) {
            Field port = Field.dport(p);
            for (int n = 1; n <= MAX_N; n++) {
                b.set(new NftSet(ips(p, n), List.of("ipv4_addr", "inet_service"), null, List.of(), 0, null));
                b.set(NftSet.typeofMap(endpoints(p, n), new NftSet.Typeof(List.of(Field.DADDR, port), n, List.of(Field.DADDR, port)), "ipv4_addr", null));
                b.set(new NftSet(nodeports(p, n), List.of("inet_service"), null, List.of(), 0, null));
                b.set(NftSet.typeofMap(nodeportEndpoints(p, n), new NftSet.Typeof(List.of(port), n, List.of(Field.DADDR, port)), "ipv4_addr", null));
            }
        }

        base("filter-forward", "filter", "forward", 0);
        base("filter-input", "filter", "input", 0);
        base("filter-output", "filter", "output", 0);
        base("nat-prerouting", "nat", "prerouting", -100);
        base("nat-output", "nat", "output", -100);
        base("nat-postrouting", "nat", "postrouting", 100);
        for (String c : List.of("services", "masquerading", "cluster-ips-check", "reject-chain", "service-endpoints-check",
                "nodeport-endpoints-check")) {
            b.chain(Chain.regular(c));
        }

        rule("filter-forward", List.of(new Match.CtStateNew()), jump("service-endpoints-check"));
        rule("filter-forward", List.of(new Match.CtStateNew()), jump("cluster-ips-check"));
        rule("filter-input", List.of(new Match.CtStateNew()), jump("nodeport-endpoints-check"));
        rule("filter-input", List.of(new Match.CtStateNew()), jump("service-endpoints-check"));
        rule("filter-output", List.of(new Match.CtStateNew()), jump("service-endpoints-check"));
        rule("filter-output", List.of(new Match.CtStateNew()), jump("cluster-ips-check"));
        rule("nat-prerouting", List.of(), jump("services"));
        rule("nat-output", List.of(), jump("services"));
        rule("nat-postrouting", List.of(), jump("masquerading"));

        b.rule(new Rule("services", List.of(new Match.SetLookup(List.of(Field.DADDR), "cluster-ips", false),
                new Match.AddrIn(Field.SADDR, true, List.of(IpPrefix.parse(TestAddresses.CLUSTER_CIDR)))),
                List.of(new Statement.MarkOr(MARK)), "masquerade clusterIP traffic from outside cluster"));
        b.rule(new Rule("services", List.of(), List.of(new Statement.VmapLookup(List.of(Field.DADDR, Field.L4PROTO, Field.DPORT), "service-ips")), null));
        rule("services", List.of(new Match.SetLookup(List.of(Field.DADDR, Field.L4PROTO, Field.DPORT), "flat-external-ips", false)),
                new Statement.MarkOr(MARK));
        for (Protocol p : List.of(Protocol.TCP, Protocol.UDP)) {
            for (int n = 1; n <= MAX_N; n++) {
                rule("services", List.of(new Match.SetLookup(List.of(Field.DADDR, Field.dport(p)), ips(p, n), false)),
                        new Statement.DnatMap(List.of(Field.DADDR, Field.dport(p)), n, endpoints(p, n)));
            }
        }
        rule("services", List.of(nodePortAddress()), new Statement.VmapLookup(List.of(Field.L4PROTO, Field.DPORT), "service-nodeports"));
        for (Protocol p : List.of(Protocol.TCP, Protocol.UDP)) {
            for (int n = 1; n <= MAX_N; n++) {
                rule("services", List.of(nodePortAddress(), new Match.SetLookup(List.of(Field.dport(p)), nodeports(p, n), false)),
                        new Statement.MarkOr(MARK), new Statement.DnatMap(List.of(Field.dport(p)), n, nodeportEndpoints(p, n)));
            }
        }

        rule("masquerading", List.of(new Match.MarkBits(MARK)), new Statement.MarkXor(MARK), new Statement.Masquerade());
        rule("masquerading", List.of(new Match.CtStatusDnat(),
                new Match.SetLookup(List.of(Field.SADDR, Field.DADDR, Field.L4PROTO, Field.DPORT), "hairpin-connections", false)),
                new Statement.Masquerade());
        b.rule(new Rule("cluster-ips-check", List.of(new Match.SetLookup(List.of(Field.DADDR), "cluster-ips", false)),
                List.of(new Statement.Reject()), "Reject traffic to invalid ports of ClusterIPs"));
        rule("reject-chain", List.of(), new Statement.Reject());
        rule("service-endpoints-check", List.of(), new Statement.VmapLookup(List.of(Field.DADDR, Field.L4PROTO, Field.DPORT), "no-endpoint-services"));
        rule("service-endpoints-check", List.of(new Match.SetLookup(List.of(Field.DADDR, Field.L4PROTO, Field.DPORT), "no-endpoint-services", false)),
                new Statement.Decide(new Verdict.Goto("reject-chain")));
        rule("nodeport-endpoints-check", List.of(nodePortAddress()),
                new Statement.VmapLookup(List.of(Field.L4PROTO, Field.DPORT), "no-endpoint-nodeports"));
        rule("nodeport-endpoints-check", List.of(nodePortAddress(),
                new Match.SetLookup(List.of(Field.L4PROTO, Field.DPORT), "no-endpoint-nodeports", false)),
                new Statement.Decide(new Verdict.Goto("reject-chain")));

        element("nodeport-ips", addr(NODE_IP));
    }

    static String ips(Protocol p, int n) { return "flat-ips-" + p.nftName() + "-" + n; }
    static String endpoints(Protocol p, int n) { return "flat-endpoints-" + p.nftName() + "-" + n; }
    static String nodeports(Protocol p, int n) { return "flat-nodeports-" + p.nftName() + "-" + n; }
    static String nodeportEndpoints(Protocol p, int n) { return "flat-nodeport-endpoints-" + p.nftName() + "-" + n; }

    static Statement.Target target(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        return new Statement.Target(IpAddress.parse(hostPort.substring(0, colon)), Integer.parseInt(hostPort.substring(colon + 1)));
    }

    /**
     * The elements of a simple service port: {@code clusterIP} and {@code externalIPs} on {@code port}, endpoints
     * {@code ip:port} in slot order, a NodePort when {@code nodePort > 0}.
     */
    FlatTable service(Protocol p, String clusterIP, List<String> externalIPs, int port, int nodePort, List<String> endpoints) {
        int n = endpoints.size();
        if (n < 1 || n > MAX_N) throw new IllegalArgumentException(n + " endpoints");
        element("cluster-ips", addr(clusterIP));
        List<String> all = new ArrayList<>();
        all.add(clusterIP);
        all.addAll(externalIPs);
        for (String a : all) {
            b.element(new Element("service-ips", List.of(addr(a), new Value.Proto(p), new Value.Port(port)), new Verdict.Continue(), null));
            element(ips(p, n), addr(a), new Value.Port(port));
            for (int i = 0; i < n; i++) {
                b.element(Element.data(endpoints(p, n), List.of(addr(a), new Value.Port(port), new Value.Index(i)), target(endpoints.get(i))));
            }
        }
        for (String a : externalIPs) element("flat-external-ips", addr(a), new Value.Proto(p), new Value.Port(port));
        if (nodePort > 0) {
            b.element(new Element("service-nodeports", List.of(new Value.Proto(p), new Value.Port(nodePort)), new Verdict.Continue(), null));
            element(nodeports(p, n), new Value.Port(nodePort));
            for (int i = 0; i < n; i++) {
                b.element(Element.data(nodeportEndpoints(p, n), List.of(new Value.Port(nodePort), new Value.Index(i)), target(endpoints.get(i))));
            }
        }
        return this;
    }

    /** A service port without endpoints: its no-endpoint element says {@code verdict} ({@code continue} or {@code drop}). */
    FlatTable noEndpoints(Protocol p, String clusterIP, int port, int nodePort, Verdict verdict) {
        element("cluster-ips", addr(clusterIP));
        b.element(new Element("no-endpoint-services", List.of(addr(clusterIP), new Value.Proto(p), new Value.Port(port)), verdict,
                "ns/svc:" + p.nftName() + " has no endpoints"));
        if (nodePort > 0) {
            b.element(new Element("no-endpoint-nodeports", List.of(new Value.Proto(p), new Value.Port(nodePort)), verdict,
                    "ns/svc:" + p.nftName() + " has no endpoints"));
        }
        return this;
    }

    FlatTable element(String set, Value... key) {
        b.element(new Element(set, List.of(key), null, null));
        return this;
    }

    FlatTable element(Element e) {
        b.element(e);
        return this;
    }

    FlatTable rule(String chain, List<Match> m, Statement... s) {
        b.rule(new Rule(chain, m, List.of(s), null));
        return this;
    }

    TableContent build() { return b.build(); }

    static Value addr(String ip) { return new Value.Addr(IpAddress.parse(ip)); }

    private static Match nodePortAddress() { return new Match.SetLookup(List.of(Field.DADDR), "nodeport-ips", false); }

    private static Statement jump(String chain) { return new Statement.Decide(new Verdict.Jump(chain)); }

    private void base(String name, String type, String hook, int priority) {
        b.chain(new Chain(name, new Chain.Hook(type, hook, priority), null));
    }
}
