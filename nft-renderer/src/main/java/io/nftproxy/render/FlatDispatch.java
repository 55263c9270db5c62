package io.nftproxy.render;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.Protocol;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Field;
import io.nftproxy.nft.Match;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.Statement;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Value;
import io.nftproxy.nft.Verdict;
import io.nftproxy.service.Endpoint;
import io.nftproxy.service.ServicePort;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static io.nftproxy.render.TableSkeleton.decide;
import static io.nftproxy.render.ServicePortRules.addr;
import static io.nftproxy.render.ServicePortRules.target;
import static io.nftproxy.render.TableSkeleton.rule;

/**
 * The {@link TableLayout#FLAT} dispatch: the fixed sets, maps and rules created with the table, and the elements a
 * simple service port puts into them. Every object here exists from the first transaction on and none is ever
 * added later, so a simple port's life is element updates only: the kernel neither revalidates the table nor
 * re-binds a map for them (docs/table-layout.md has the kernel code paths and the measurements).
 *
 * <p>The sets and maps are per protocol and per endpoint count because nft 1.0.6 can only reference a map declared
 * with a protocol-bound port ({@code tcp dport}) from a later transaction, and a map's {@code numgen random mod N}
 * is fixed by its declaration.
 */
final class FlatDispatch {
    /** The endpoint counts with objects of their own; a port with more endpoints keeps its chains. */
    static final int MAX_ENDPOINTS = 16;
    static final List<Protocol> PROTOCOLS = List.of(Protocol.TCP, Protocol.UDP);
    static final String EXTERNAL_IPS = "flat-external-ips";

    private FlatDispatch() {}

    static String ips(Protocol p, int n) { return "flat-ips-" + p.nftName() + "-" + n; }

    static String endpoints(Protocol p, int n) { return "flat-endpoints-" + p.nftName() + "-" + n; }

    static String nodePorts(Protocol p, int n) { return "flat-nodeports-" + p.nftName() + "-" + n; }

    static String nodePortEndpoints(Protocol p, int n) { return "flat-nodeport-endpoints-" + p.nftName() + "-" + n; }

    /**
     * Whether a port's every path is "pick one of its endpoints at random, DNAT": Cluster traffic policies, no
     * affinity, no firewall, a protocol with flat objects, and an endpoint count that has them.
     */
    static boolean simple(ServicePort svc, List<Endpoint> cluster) {
        return !svc.usesLocalEndpoints() && !svc.hasAffinity() && !svc.usesFirewall()
                && PROTOCOLS.contains(svc.protocol()) && !cluster.isEmpty() && cluster.size() <= MAX_ENDPOINTS;
    }

    static void sets(TableContent.Builder t, IpFamily family) {
        String addr = family.addrType();
        t.set(new NftSet(EXTERNAL_IPS, List.of(addr, "inet_proto", "inet_service"), null, List.of(), 0,
                "external and load-balancer IPs of flat-dispatched services, to masquerade"));
        for (Protocol p : PROTOCOLS) {
            Field port = Field.dport(p);
            for (int n = 1; n <= MAX_ENDPOINTS; n++) {
                String what = p.nftName() + " service ports with " + n + (n == 1 ? " endpoint" : " endpoints");
                t.set(new NftSet(ips(p, n), List.of(addr, "inet_service"), null, List.of(), 0, "service IPs of " + what));
                t.set(NftSet.typeofMap(endpoints(p, n), new NftSet.Typeof(List.of(Field.DADDR, port), n,
                        List.of(Field.DADDR, port)), addr, "endpoints of " + what + ", by service IP, port and slot"));
                t.set(new NftSet(nodePorts(p, n), List.of("inet_service"), null, List.of(), 0, "NodePorts of " + what));
                t.set(NftSet.typeofMap(nodePortEndpoints(p, n), new NftSet.Typeof(List.of(port), n,
                        List.of(Field.DADDR, port)), addr, "endpoints of " + what + ", by NodePort and slot"));
            }
        }
    }

    /** The rules that follow the {@code service-ips} lookup: masquerade external traffic, DNAT service IPs. */
    static void serviceIpRules(TableContent.Builder t, int mark) {
        t.rule(rule(TableSkeleton.SERVICES, List.of(new Match.SetLookup(TableSkeleton.DST_TUPLE, EXTERNAL_IPS, false)),
                List.of(new Statement.MarkOr(mark)), null));
        for (Protocol p : PROTOCOLS) {
            List<Field> key = List.of(Field.DADDR, Field.dport(p));
            for (int n = 1; n <= MAX_ENDPOINTS; n++) {
                t.rule(rule(TableSkeleton.SERVICES, List.of(new Match.SetLookup(key, ips(p, n), false)),
                        List.of(new Statement.DnatMap(key, n, endpoints(p, n))), null));
            }
        }
    }

    /** The rules that follow the {@code service-nodeports} lookup: masquerade and DNAT NodePorts. */
    static void nodePortRules(TableContent.Builder t, List<Match> toNodePort, int mark) {
        for (Protocol p : PROTOCOLS) {
            List<Field> key = List.of(Field.dport(p));
            for (int n = 1; n <= MAX_ENDPOINTS; n++) {
                List<Match> m = new ArrayList<>(toNodePort);
                m.add(new Match.SetLookup(key, nodePorts(p, n), false));
                t.rule(rule(TableSkeleton.SERVICES, m,
                        List.of(new Statement.MarkOr(mark), new Statement.DnatMap(key, n, nodePortEndpoints(p, n))), null));
            }
        }
    }

    /**
     * The rule after a no-endpoint map's lookup that rejects its {@code continue} elements: a lookup of the map as a
     * set, which a {@code drop} element never reaches.
     */
    static void rejectRule(TableContent.Builder t, String chain, List<Match> before, List<Field> key, String map) {
        List<Match> m = new ArrayList<>(before);
        m.add(new Match.SetLookup(key, map, false));
        t.rule(rule(chain, m, List.of(decide(new Verdict.Goto(TableSkeleton.REJECT_CHAIN))), null));
    }

    /**
     * A simple port's elements: kube-proxy's dispatch entries with verdict {@code continue}, and the flat ones. Each
     * carries the port's {@code ns/svc:port} comment, as kube-proxy's no-endpoint elements do, because without a
     * chain named for the Service nothing else in the listing says whose address, NodePort or endpoint it is.
     */
    static void elements(List<Element> out, ServicePort svc, List<Endpoint> cluster, String comment) {
        Protocol p = svc.protocol();
        int n = cluster.size();
        Value proto = new Value.Proto(p);
        Value port = new Value.Port(svc.port());
        Verdict next = new Verdict.Continue();
        List<IpAddress> external = ServicePortRules.external(svc);
        List<IpAddress> all = Stream.concat(Stream.of(svc.clusterIP()), external.stream()).toList();
        for (IpAddress ip : all) out.add(new Element(TableSkeleton.SERVICE_IPS, List.of(addr(ip), proto, port), next, comment));
        for (IpAddress ip : all) out.add(new Element(ips(p, n), List.of(addr(ip), port), null, comment));
        for (IpAddress ip : external) out.add(new Element(EXTERNAL_IPS, List.of(addr(ip), proto, port), null, comment));
        for (IpAddress ip : all) {
            for (int i = 0; i < n; i++) {
                out.add(new Element(endpoints(p, n), List.of(addr(ip), port, new Value.Index(i)), null, comment,
                        target(cluster.get(i))));
            }
        }
        if (svc.nodePort() == 0) return;
        Value np = new Value.Port(svc.nodePort());
        out.add(new Element(TableSkeleton.SERVICE_NODEPORTS, List.of(proto, np), next, comment));
        out.add(new Element(nodePorts(p, n), List.of(np), null, comment));
        for (int i = 0; i < n; i++) {
            out.add(new Element(nodePortEndpoints(p, n), List.of(np, new Value.Index(i)), null, comment,
                    target(cluster.get(i))));
        }
    }
}
