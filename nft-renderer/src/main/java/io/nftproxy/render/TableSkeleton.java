package io.nftproxy.render;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Field;
import io.nftproxy.nft.Match;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Statement;
import io.nftproxy.nft.Verdict;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.NodeContext;

import java.util.List;

/**
 * The part of the table that does not depend on individual services: base chains and their jump rules, the
 * static dispatch and check chains, and the sets and maps the per-service code fills. Names, hooks, priorities,
 * rule order and comments are kube-proxy 1.36's, because operators' tooling depends on them.
 */
final class TableSkeleton {
    static final String SERVICES = "services";
    static final String MASQUERADING = "masquerading";
    static final String CLUSTER_IPS_CHECK = "cluster-ips-check";
    static final String FIREWALL_CHECK = "firewall-check";
    static final String REJECT_CHAIN = "reject-chain";
    static final String SERVICE_ENDPOINTS_CHECK = "service-endpoints-check";
    static final String NODEPORT_ENDPOINTS_CHECK = "nodeport-endpoints-check";

    static final String CLUSTER_IPS = "cluster-ips";
    static final String NODEPORT_IPS = "nodeport-ips";
    static final String HAIRPIN = "hairpin-connections";
    static final String SERVICE_IPS = "service-ips";
    static final String SERVICE_NODEPORTS = "service-nodeports";
    static final String FIREWALL_IPS = "firewall-ips";
    static final String NO_ENDPOINT_SERVICES = "no-endpoint-services";
    static final String NO_ENDPOINT_NODEPORTS = "no-endpoint-nodeports";

    static final List<Field> DST_TUPLE = List.of(Field.DADDR, Field.L4PROTO, Field.DPORT);
    static final List<Field> PROTO_PORT = List.of(Field.L4PROTO, Field.DPORT);

    private record BaseChain(String name, String type, String hook, int priority) {}

    /** Upstream's base chains, in upstream's order; priorities numeric (dstnat = -100, srcnat = 100, filter = 0). */
    private static final List<BaseChain> BASE_CHAINS = List.of(
            new BaseChain("filter-prerouting-pre-dnat", "filter", "prerouting", -110),
            new BaseChain("filter-output-pre-dnat", "filter", "output", -110),
            new BaseChain("filter-input", "filter", "input", 0),
            new BaseChain("filter-forward", "filter", "forward", 0),
            new BaseChain("filter-output", "filter", "output", 0),
            new BaseChain("nat-prerouting", "nat", "prerouting", -100),
            new BaseChain("nat-output", "nat", "output", -100),
            new BaseChain("nat-postrouting", "nat", "postrouting", 100));

    private TableSkeleton() {}

    static void write(TableContent.Builder t, IpFamily family, NodeContext node, List<IpPrefix> serviceCidrs,
                      TableLayout layout) {
        boolean matchAll = node.nodePortMatchAll(family);
        sets(t, family, matchAll);
        if (layout.flat()) FlatDispatch.sets(t, family);
        for (BaseChain b : BASE_CHAINS) t.chain(new Chain(b.name, new Chain.Hook(b.type, b.hook, b.priority), null));
        for (String c : List.of(SERVICES, MASQUERADING, CLUSTER_IPS_CHECK, FIREWALL_CHECK)) t.chain(Chain.regular(c));
        t.chain(new Chain(REJECT_CHAIN, null, "helper for @no-endpoint-services / @no-endpoint-nodeports"));
        t.chain(Chain.regular(SERVICE_ENDPOINTS_CHECK));
        t.chain(Chain.regular(NODEPORT_ENDPOINTS_CHECK));

        jumps(t);
        int mark = node.masqueradeMark();
        servicesChain(t, family, node, matchAll, mark, layout);
        t.rule(rule(MASQUERADING, List.of(new Match.MarkBits(mark)),
                List.of(new Statement.MarkXor(mark), new Statement.Masquerade()), null));
        t.rule(rule(MASQUERADING, List.of(new Match.CtStatusDnat(),
                        new Match.SetLookup(List.of(Field.SADDR, Field.DADDR, Field.L4PROTO, Field.DPORT), HAIRPIN, false)),
                List.of(new Statement.Masquerade()), null));
        t.rule(rule(CLUSTER_IPS_CHECK, List.of(new Match.SetLookup(List.of(Field.DADDR), CLUSTER_IPS, false)),
                List.of(new Statement.Reject()), "Reject traffic to invalid ports of ClusterIPs"));
        if (!serviceCidrs.isEmpty()) {
            t.rule(rule(CLUSTER_IPS_CHECK, List.of(new Match.AddrIn(Field.DADDR, false, serviceCidrs)),
                    List.of(decide(new Verdict.Drop())), "Drop traffic to unallocated ClusterIPs"));
        }
        t.rule(rule(FIREWALL_CHECK, List.of(), List.of(new Statement.VmapLookup(DST_TUPLE, FIREWALL_IPS)), null));
        t.rule(rule(REJECT_CHAIN, List.of(), List.of(new Statement.Reject()), null));
        t.rule(rule(SERVICE_ENDPOINTS_CHECK, List.of(), List.of(new Statement.VmapLookup(DST_TUPLE, NO_ENDPOINT_SERVICES)), null));
        if (layout.flat()) FlatDispatch.rejectRule(t, SERVICE_ENDPOINTS_CHECK, List.of(), DST_TUPLE, NO_ENDPOINT_SERVICES);
        List<Match> npMatch = matchAll
                ? List.of(new Match.AddrIn(Field.DADDR, true, List.of(family.loopback())))
                : List.of(new Match.SetLookup(List.of(Field.DADDR), NODEPORT_IPS, false));
        t.rule(rule(NODEPORT_ENDPOINTS_CHECK, npMatch, List.of(new Statement.VmapLookup(PROTO_PORT, NO_ENDPOINT_NODEPORTS)), null));
        if (layout.flat()) FlatDispatch.rejectRule(t, NODEPORT_ENDPOINTS_CHECK, npMatch, PROTO_PORT, NO_ENDPOINT_NODEPORTS);
    }

    private static void sets(TableContent.Builder t, IpFamily family, boolean matchAll) {
        String addr = family.addrType();
        List<String> dstTuple = List.of(addr, "inet_proto", "inet_service");
        List<String> protoPort = List.of("inet_proto", "inet_service");
        t.set(new NftSet(CLUSTER_IPS, List.of(addr), null, List.of(), 0, "Active ClusterIPs"));
        if (!matchAll) t.set(new NftSet(NODEPORT_IPS, List.of(addr), null, List.of(), 0, "IPs that accept NodePort traffic"));
        t.set(new NftSet(HAIRPIN, List.of(addr, addr, "inet_proto", "inet_service"), null, List.of(), 0,
                "service hairpin connections"));
        t.set(new NftSet(SERVICE_IPS, dstTuple, "verdict", List.of(), 0, "ClusterIP, ExternalIP and LoadBalancer IP traffic"));
        t.set(new NftSet(SERVICE_NODEPORTS, protoPort, "verdict", List.of(), 0, "NodePort traffic"));
        t.set(new NftSet(FIREWALL_IPS, dstTuple, "verdict", List.of(), 0,
                "destinations that are subject to LoadBalancerSourceRanges"));
        t.set(new NftSet(NO_ENDPOINT_SERVICES, dstTuple, "verdict", List.of(), 0,
                "vmap to drop or reject packets to services with no endpoints"));
        t.set(new NftSet(NO_ENDPOINT_NODEPORTS, protoPort, "verdict", List.of(), 0,
                "vmap to drop or reject packets to service nodeports with no endpoints"));
    }

    private static void jumps(TableContent.Builder t) {
        Match ctNew = new Match.CtStateNew();
        t.rule(rule("filter-input", List.of(ctNew), List.of(decide(new Verdict.Jump(NODEPORT_ENDPOINTS_CHECK))), null));
        t.rule(rule("filter-input", List.of(ctNew), List.of(decide(new Verdict.Jump(SERVICE_ENDPOINTS_CHECK))), null));
        t.rule(rule("filter-forward", List.of(ctNew), List.of(decide(new Verdict.Jump(SERVICE_ENDPOINTS_CHECK))), null));
        t.rule(rule("filter-forward", List.of(ctNew), List.of(decide(new Verdict.Jump(CLUSTER_IPS_CHECK))), null));
        t.rule(rule("filter-output", List.of(ctNew), List.of(decide(new Verdict.Jump(SERVICE_ENDPOINTS_CHECK))), null));
        t.rule(rule("filter-output", List.of(ctNew), List.of(decide(new Verdict.Jump(CLUSTER_IPS_CHECK))), null));
        t.rule(rule("filter-prerouting-pre-dnat", List.of(ctNew), List.of(decide(new Verdict.Jump(FIREWALL_CHECK))), null));
        t.rule(rule("filter-output-pre-dnat", List.of(ctNew), List.of(decide(new Verdict.Jump(FIREWALL_CHECK))), null));
        t.rule(rule("nat-prerouting", List.of(), List.of(decide(new Verdict.Jump(SERVICES))), null));
        t.rule(rule("nat-output", List.of(), List.of(decide(new Verdict.Jump(SERVICES))), null));
        t.rule(rule("nat-postrouting", List.of(), List.of(decide(new Verdict.Jump(MASQUERADING))), null));
    }

    private static void servicesChain(TableContent.Builder t, IpFamily family, NodeContext node, boolean matchAll, int mark,
                                      TableLayout layout) {
        Match toClusterIP = new Match.SetLookup(List.of(Field.DADDR), CLUSTER_IPS, false);
        java.util.Optional<Match> notPod = PodTrafficMatch.of(node, family, true);
        if (node.masqueradeAll()) {
            t.rule(rule(SERVICES, List.of(toClusterIP), List.of(new Statement.MarkOr(mark)), "masquerade all clusterIP traffic"));
        } else if (notPod.isPresent()) {
            t.rule(rule(SERVICES, List.of(toClusterIP, notPod.get()),
                    List.of(new Statement.MarkOr(mark)), "masquerade clusterIP traffic from outside cluster"));
        }
        t.rule(rule(SERVICES, List.of(), List.of(new Statement.VmapLookup(DST_TUPLE, SERVICE_IPS)), null));
        if (layout.flat()) FlatDispatch.serviceIpRules(t, mark);
        List<Match> np = matchAll
                ? List.of(new Match.FibLocal(Field.DADDR), new Match.AddrIn(Field.DADDR, true, List.of(family.loopback())))
                : List.of(new Match.SetLookup(List.of(Field.DADDR), NODEPORT_IPS, false));
        t.rule(rule(SERVICES, np, List.of(new Statement.VmapLookup(PROTO_PORT, SERVICE_NODEPORTS)), null));
        if (layout.flat()) FlatDispatch.nodePortRules(t, np, mark);
    }

    static Rule rule(String chain, List<Match> matches, List<Statement> statements, String comment) {
        return new Rule(chain, matches, statements, comment);
    }

    static Statement decide(Verdict v) { return new Statement.Decide(v); }
}
