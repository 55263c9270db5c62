package io.nftproxy.render;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Field;
import io.nftproxy.nft.Match;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.NftSyntax;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Statement;
import io.nftproxy.nft.Value;
import io.nftproxy.nft.Verdict;
import io.nftproxy.service.Endpoint;
import io.nftproxy.service.EndpointSelector;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.NodeContext;
import io.nftproxy.service.ServicePort;
import io.nftproxy.service.ServicePortName;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;

import static io.nftproxy.render.TableSkeleton.decide;
import static io.nftproxy.render.TableSkeleton.rule;

/**
 * Everything one service port contributes to the table: dispatch elements (service-ips, service-nodeports,
 * firewall-ips, no-endpoint-*), hairpin elements, and its policy, external, firewall and endpoint chains.
 * Follows kube-proxy 1.36's per-port logic (reference section 1.6).
 */
final class ServicePortRules {
    private final NodeContext node;
    private final TableLayout layout;
    private final List<NftSet> sets = new ArrayList<>(1);
    private final List<Chain> chains = new ArrayList<>(4);
    private final List<Rule> rules = new ArrayList<>(4);
    private final List<Element> elements = new ArrayList<>(4);

    private ServicePortRules(NodeContext node, TableLayout layout) {
        this.node = node;
        this.layout = layout;
    }

    /** Renders one service port on its own: the result depends only on the arguments. */
    static ServicePortFragment fragment(ServicePort svc, List<Endpoint> endpoints, NodeContext node, TableLayout layout) {
        return new ServicePortRules(node, layout).write(svc, endpoints);
    }

    private ServicePortFragment write(ServicePort svc, List<Endpoint> endpoints) {
        ServicePortName n = svc.name();
        EndpointSelector.Selection sel = EndpointSelector.select(svc, endpoints, node);
        boolean hasEndpoints = sel.hasAnyEndpoints();
        boolean hasInternal = hasEndpoints && !(svc.internalLocal() && sel.local().isEmpty());
        boolean hasExternal = hasEndpoints && !(svc.externalLocal() && sel.local().isEmpty());

        // Cut here as nft stores it (a namespace, name and port name reach 191 bytes), so that the table read back
        // from the kernel equals the model and a restart adopts it without rewriting these elements.
        String comment = NftSyntax.comment(n.elementComment());
        elements.add(new Element(TableSkeleton.CLUSTER_IPS, List.of(addr(svc.clusterIP())), null, null));
        if (layout.flat() && FlatDispatch.simple(svc, sel.cluster())) {
            FlatDispatch.elements(elements, svc, sel.cluster(), comment);
            hairpin(svc, sel.allReachable());
            return new ServicePortFragment(n, sets, chains, rules, elements, false, false);
        }
        String clusterChain = svc.usesClusterEndpoints() && !sel.cluster().isEmpty() ? ChainNames.service(n) : null;
        String localChain = svc.usesLocalEndpoints() && !sel.local().isEmpty() ? ChainNames.local(n) : null;
        String internalChain = svc.internalLocal() ? localChain : clusterChain;
        String externalChain = svc.externallyAccessible() && hasEndpoints ? ChainNames.external(n) : null;
        String firewallChain = svc.usesFirewall() ? ChainNames.firewall(n) : null;

        // Without endpoints anywhere, connections are refused; with endpoints only elsewhere, a Local policy drops.
        // FLAT rejects through a fixed rule after the lookup, so that losing the last endpoint adds no goto element.
        Verdict reject = layout.flat() ? new Verdict.Continue() : new Verdict.Goto(TableSkeleton.REJECT_CHAIN);
        Verdict internalFilter = hasEndpoints ? (hasInternal ? null : new Verdict.Drop()) : reject;
        Verdict externalFilter = hasEndpoints ? (hasExternal ? null : new Verdict.Drop()) : reject;

        // Chains first, so the elements below always point at something that exists.
        if (svc.hasAffinity()) endpointChains(svc, sel.allReachable());
        if (clusterChain != null) policyChain(svc, clusterChain, sel.cluster());
        if (localChain != null) policyChain(svc, localChain, sel.local());
        if (externalChain != null) externalChain(svc, externalChain, clusterChain, localChain);
        if (firewallChain != null) firewallChain(svc, firewallChain);

        if (hasInternal) {
            dispatch(TableSkeleton.SERVICE_IPS, svc, svc.clusterIP(), new Verdict.Goto(internalChain), null);
        } else {
            dispatch(TableSkeleton.NO_ENDPOINT_SERVICES, svc, svc.clusterIP(), internalFilter, comment);
        }
        // Each set's elements keep upstream's order: externalIPs, then LoadBalancer IPs.
        for (IpAddress ip : external(svc)) {
            if (hasEndpoints) dispatch(TableSkeleton.SERVICE_IPS, svc, ip, new Verdict.Goto(externalChain), null);
            if (!hasExternal) dispatch(TableSkeleton.NO_ENDPOINT_SERVICES, svc, ip, externalFilter, comment);
        }
        if (firewallChain != null) {
            for (IpAddress ip : svc.loadBalancerIPs()) {
                dispatch(TableSkeleton.FIREWALL_IPS, svc, ip, new Verdict.Goto(firewallChain), null);
            }
        }
        if (svc.nodePort() != 0) {
            List<Value> key = List.of(new Value.Proto(svc.protocol()), new Value.Port(svc.nodePort()));
            if (hasEndpoints) elements.add(new Element(TableSkeleton.SERVICE_NODEPORTS, key, new Verdict.Goto(externalChain), null));
            if (!hasExternal) elements.add(new Element(TableSkeleton.NO_ENDPOINT_NODEPORTS, key, externalFilter, comment));
        }
        hairpin(svc, sel.allReachable());
        return new ServicePortFragment(n, sets, chains, rules, elements, hasEndpoints && !hasInternal,
                hasEndpoints && !hasExternal && svc.externallyAccessible());
    }

    /** An element of a set keyed {@code ip . proto . port} of this service port. */
    private void dispatch(String set, ServicePort svc, IpAddress ip, Verdict v, String comment) {
        List<Value> key = List.of(addr(ip), new Value.Proto(svc.protocol()), new Value.Port(svc.port()));
        elements.add(new Element(set, key, v, comment));
    }

    /** Local endpoints that connect to their own service come back masqueraded (their own address, upstream). */
    private void hairpin(ServicePort svc, List<Endpoint> reachable) {
        Value proto = new Value.Proto(svc.protocol());
        for (Endpoint e : reachable) {
            if (e.local()) {
                List<Value> key = List.of(addr(e.ip()), addr(e.ip()), proto, new Value.Port(e.port()));
                elements.add(new Element(TableSkeleton.HAIRPIN, key, null, null));
            }
        }
    }

    /** One chain and one timeout set per reachable endpoint: the ClientIP affinity machinery. */
    private void endpointChains(ServicePort svc, List<Endpoint> endpoints) {
        for (Endpoint e : endpoints) {
            String set = ChainNames.affinity(svc.name(), e);
            String chain = ChainNames.endpoint(svc.name(), e);
            sets.add(new NftSet(set, List.of(svc.family().addrType()), null, List.of("dynamic", "timeout"),
                    svc.affinityTimeoutSeconds(), null));
            chains.add(Chain.regular(chain));
            rules.add(rule(chain, List.of(), List.of(new Statement.UpdateSet(set, Field.SADDR)), null));
            rules.add(rule(chain, List.of(new Match.ProtoIs(svc.protocol())),
                    List.of(new Statement.Dnat(List.of(target(e)), true)), null));
        }
    }

    /** The service-/local- chain: affinity lookups, then a random pick among the endpoints. */
    private void policyChain(ServicePort svc, String chain, List<Endpoint> endpoints) {
        chains.add(Chain.regular(chain));
        if (svc.hasAffinity()) {
            List<Verdict> targets = new ArrayList<>();
            for (Endpoint e : endpoints) {
                String epChain = ChainNames.endpoint(svc.name(), e);
                Match sticky = new Match.SetLookup(List.of(Field.SADDR), ChainNames.affinity(svc.name(), e), false);
                rules.add(rule(chain, List.of(sticky), List.of(decide(new Verdict.Goto(epChain))), null));
                targets.add(new Verdict.Goto(epChain));
            }
            pick(chain, List.of(), targets, Statement.Decide::new, Statement.NumgenVmap::new);
            return;
        }
        pick(chain, List.of(new Match.ProtoIs(svc.protocol())), endpoints.stream().map(ServicePortRules::target).toList(),
                t -> new Statement.Dnat(List.of(t), true), ts -> new Statement.Dnat(ts, false));
    }

    /**
     * A random pick among {@code targets}: upstream's one rule with an anonymous numgen map ({@code all}), or in a
     * cascading layout one rule per target ({@code one}). Cascade rule i is reached with probability (n-i)/n and
     * takes its draw with probability 1/(n-i), so every step wins with probability 1/n; the last takes what is left.
     */
    private <T> void pick(String chain, List<Match> before, List<T> targets, Function<T, Statement> one,
                          Function<List<T>, Statement> all) {
        if (!layout.cascades()) {
            rules.add(rule(chain, before, List.of(all.apply(targets)), null));
            return;
        }
        int n = targets.size();
        for (int i = 0; i < n; i++) {
            List<Match> matches = new ArrayList<>(before);
            if (i < n - 1) matches.add(new Match.NumgenIs(n - i, 0));
            rules.add(rule(chain, matches, List.of(one.apply(targets.get(i))), null));
        }
    }

    private void externalChain(ServicePort svc, String chain, String clusterChain, String localChain) {
        chains.add(Chain.regular(chain));
        int mark = node.masqueradeMark();
        if (!svc.externalLocal()) {
            rules.add(rule(chain, List.of(), List.of(new Statement.MarkOr(mark)), "masquerade"));
            rules.add(rule(chain, List.of(), List.of(decide(new Verdict.Goto(clusterChain))), null));
            return;
        }
        PodTrafficMatch.of(node, svc.family(), false).ifPresent(pod -> rules.add(rule(chain, List.of(pod),
                List.of(decide(new Verdict.Goto(clusterChain))), "short-circuit pod traffic")));
        rules.add(rule(chain, List.of(new Match.FibLocal(Field.SADDR)), List.of(new Statement.MarkOr(mark)),
                "masquerade local traffic"));
        rules.add(rule(chain, List.of(new Match.FibLocal(Field.SADDR)), List.of(decide(new Verdict.Goto(clusterChain))),
                "short-circuit local traffic"));
        if (localChain != null) rules.add(rule(chain, List.of(), List.of(decide(new Verdict.Goto(localChain))), null));
    }

    /**
     * Drops new connections to the LB VIPs from sources outside loadBalancerSourceRanges. The VIPs themselves are
     * allowed too when a range covers a node IP, for node traffic that something SNATs to the VIP (upstream #84398).
     */
    private void firewallChain(ServicePort svc, String chain) {
        chains.add(Chain.regular(chain));
        List<IpPrefix> allowed = new ArrayList<>(svc.loadBalancerSourceRanges());
        boolean coversNode = node.nodeIPs(svc.family()).stream()
                .anyMatch(ip -> svc.loadBalancerSourceRanges().stream().anyMatch(r -> r.contains(ip)));
        if (coversNode) svc.loadBalancerIPs().forEach(ip -> allowed.add(IpPrefix.host(ip)));
        rules.add(rule(chain, List.of(new Match.AddrIn(Field.SADDR, true, allowed)), List.of(decide(new Verdict.Drop())), null));
    }

    static Value addr(IpAddress ip) { return new Value.Addr(ip); }

    /** The externalIPs, then the LoadBalancer IPs: upstream's order within each set. */
    static List<IpAddress> external(ServicePort svc) {
        return Stream.concat(svc.externalIPs().stream(), svc.loadBalancerIPs().stream()).toList();
    }

    static Statement.Target target(Endpoint e) { return new Statement.Target(e.ip(), e.port()); }
}
