package io.nftproxy.random;

import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceObject;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Reduces a failing {@link RandomCluster} to a small one that still fails: drops Services (with their slices),
 * slices, endpoints and ports, in halves first and then one by one, then takes features away one at a time
 * (externalIPs, load-balancer ingress, source ranges, affinity, Local policies, topology, labels, a type for a
 * simpler one, a family of a dual-stack Service, endpoint conditions and hints, the node's settings), and repeats
 * until nothing more can go. Every step keeps the cluster one the API server accepts, so the result can be posted
 * as it is. The predicate is called at most {@code maxTries} times.
 */
public final class ClusterShrinker {
    private final Predicate<RandomCluster> fails;
    private final int maxTries;
    private int tries;

    private ClusterShrinker(Predicate<RandomCluster> fails, int maxTries) {
        this.fails = fails;
        this.maxTries = maxTries;
    }

    /** The smallest cluster found that still {@code fails}; {@code failing} itself must fail. */
    public static RandomCluster shrink(RandomCluster failing, Predicate<RandomCluster> fails) {
        return shrink(failing, fails, 5_000);
    }

    public static RandomCluster shrink(RandomCluster failing, Predicate<RandomCluster> fails, int maxTries) {
        return new ClusterShrinker(fails, maxTries).run(failing);
    }

    private RandomCluster run(RandomCluster c) {
        boolean progress = true;
        while (progress && tries < maxTries) {
            RandomCluster before = c;
            c = dropChunks(c, RandomCluster::services, (x, keep) -> {
                RandomCluster r = x;
                for (ServiceObject s : x.services()) if (!keep.contains(s)) r = r.withoutService(s);
                return r;
            });
            c = dropChunks(c, RandomCluster::slices, (x, keep) -> x.withSlices(keep));
            c = dropEndpoints(c);
            c = dropPorts(c);
            c = simplifyServices(c);
            c = simplifyEndpoints(c);
            c = simplifyNode(c);
            progress = !c.equals(before);
        }
        return c;
    }

    /** Tries the candidate; keeps it when it still fails. */
    private RandomCluster attempt(RandomCluster current, RandomCluster candidate) {
        if (candidate == null || candidate.equals(current) || tries >= maxTries) return current;
        tries++;
        return fails.test(candidate) ? candidate : current;
    }

    /** Delta debugging's reduction: drop halves, quarters, … single items of the list while the cluster fails. */
    private <T> RandomCluster dropChunks(RandomCluster c, Function<RandomCluster, List<T>> items,
                                         java.util.function.BiFunction<RandomCluster, List<T>, RandomCluster> keepOnly) {
        int chunk = Math.max(1, items.apply(c).size() / 2);
        while (chunk >= 1 && tries < maxTries) {
            boolean dropped = false;
            for (int start = 0; start < items.apply(c).size(); ) {
                List<T> all = items.apply(c);
                List<T> keep = new ArrayList<>(all.subList(0, start));
                keep.addAll(all.subList(Math.min(all.size(), start + chunk), all.size()));
                RandomCluster next = attempt(c, keepOnly.apply(c, keep));
                if (next != c) {
                    c = next;
                    dropped = true;
                } else {
                    start += chunk;
                }
            }
            if (!dropped) chunk /= 2;
        }
        return c;
    }

    private RandomCluster dropEndpoints(RandomCluster c) {
        for (int i = 0; i < c.slices().size(); i++) {
            int idx = i;
            c = dropChunks(c, x -> x.slices().get(idx).endpoints(), (x, keep) -> replaceSlice(x, idx, withEndpoints(x.slices().get(idx), keep)));
        }
        return c;
    }

    /** Drops ports of multi-port Services, with the slice ports of the same name. */
    private RandomCluster dropPorts(RandomCluster c) {
        for (int i = 0; i < c.services().size(); i++) {
            for (int p = c.services().get(i).ports().size() - 1; p >= 0 && c.services().get(i).ports().size() > 1; p--) {
                ServiceObject s = c.services().get(i);
                ServiceObject.PortSpec gone = s.ports().get(p);
                List<ServiceObject.PortSpec> ports = new ArrayList<>(s.ports());
                ports.remove(p);
                RandomCluster next = replaceService(c, i, edit(s, e -> e.put("ports", ports)));
                List<EndpointSliceObject> slices = next.slices().stream().map(sl -> !RandomCluster.belongsTo(sl, s) ? sl
                        : new EndpointSliceObject(sl.meta(), sl.addressType(), sl.ports().stream()
                        .filter(sp -> !(sp.name().equals(gone.name() == null ? "" : gone.name()) && sp.protocol().equals(gone.protocol())))
                        .toList(), sl.endpoints())).toList();
                c = attempt(c, next.withSlices(slices));
            }
        }
        return c;
    }

    /** Each simplification, for each Service, once. */
    private RandomCluster simplifyServices(RandomCluster c) {
        for (int i = 0; i < c.services().size(); i++) {
            for (Function<ServiceObject, ServiceObject> simpler : SIMPLER) {
                ServiceObject s = c.services().get(i);
                ServiceObject t = simpler.apply(s);
                if (t == null || t.equals(s)) continue;
                RandomCluster next = replaceService(c, i, t);
                // A family the Service lost takes its slices with it.
                if (t.ipFamilies().size() < s.ipFamilies().size()) {
                    next = next.withSlices(next.slices().stream().filter(sl -> !RandomCluster.belongsTo(sl, t)
                            || t.ipFamilies().contains(sl.addressType())).toList());
                }
                c = attempt(c, next);
            }
        }
        return c;
    }

    private static final List<Function<ServiceObject, ServiceObject>> SIMPLER = List.of(
            s -> edit(s, e -> e.put("externalIPs", List.of())),
            s -> edit(s, e -> e.put("loadBalancerIngress", List.of())),
            s -> edit(s, e -> e.put("loadBalancerSourceRanges", List.of())),
            s -> edit(s, e -> {
                e.put("sessionAffinity", null);
                e.put("sessionAffinityTimeoutSeconds", null);
            }),
            s -> edit(s, e -> e.put("internalTrafficPolicy", null)),
            s -> !"Local".equals(s.externalTrafficPolicy()) ? null : edit(s, e -> {
                e.put("externalTrafficPolicy", "Cluster");
                e.put("healthCheckNodePort", null);
            }),
            s -> edit(s, e -> e.put("trafficDistribution", null)),
            s -> edit(s, e -> e.put("meta", new ObjectMeta(s.meta().namespace(), s.meta().name(), Map.of(), Map.of(), false))),
            // A NodePort Service needs its node ports, which a LoadBalancer may go without.
            s -> !"LoadBalancer".equals(s.type()) || s.ports().stream().anyMatch(p -> p.nodePort() == null) ? null : edit(s, e -> {
                e.put("type", "NodePort");
                e.put("loadBalancerIngress", List.of());
                e.put("loadBalancerSourceRanges", List.of());
                e.put("healthCheckNodePort", null);
            }),
            s -> !"NodePort".equals(s.type()) && !"LoadBalancer".equals(s.type()) ? null : edit(s, e -> {
                e.put("type", "ClusterIP");
                e.put("externalTrafficPolicy", null);
                e.put("loadBalancerIngress", List.of());
                e.put("loadBalancerSourceRanges", List.of());
                e.put("healthCheckNodePort", null);
                e.put("ports", s.ports().stream().map(p -> new ServiceObject.PortSpec(p.name(), p.protocol(), p.port(),
                        p.targetPort(), null)).toList());
            }),
            s -> s.ipFamilies().size() < 2 ? null : edit(s, e -> {
                e.put("clusterIPs", s.clusterIPs().subList(0, 1));
                e.put("ipFamilies", s.ipFamilies().subList(0, 1));
            }),
            s -> s.ipFamilies().size() < 2 ? null : edit(s, e -> {
                e.put("clusterIP", s.clusterIPs().get(1));
                e.put("clusterIPs", s.clusterIPs().subList(1, 2));
                e.put("ipFamilies", s.ipFamilies().subList(1, 2));
            }));

    /** Endpoints to plain ready ones without hints, and to another node, one at a time. */
    private RandomCluster simplifyEndpoints(RandomCluster c) {
        for (int i = 0; i < c.slices().size(); i++) {
            for (int k = 0; k < c.slices().get(i).endpoints().size(); k++) {
                for (int way = 0; way < 2; way++) {
                    EndpointSliceObject sl = c.slices().get(i);
                    EndpointSliceObject.Endpoint e = sl.endpoints().get(k);
                    EndpointSliceObject.Endpoint t = way == 0
                            ? new EndpointSliceObject.Endpoint(e.addresses(), true, true, false, e.nodeName(), e.zone(), e.zoneHints(), e.nodeHints())
                            : new EndpointSliceObject.Endpoint(e.addresses(), e.ready(), e.serving(), e.terminating(), e.nodeName(), e.zone(), List.of(), List.of());
                    if (t.equals(e)) continue;
                    List<EndpointSliceObject.Endpoint> eps = new ArrayList<>(sl.endpoints());
                    eps.set(k, t);
                    c = attempt(c, replaceSlice(c, i, withEndpoints(sl, eps)));
                }
            }
        }
        return c;
    }

    private RandomCluster simplifyNode(RandomCluster c) {
        NodeSettings n = c.node();
        c = attempt(c, c.withNode(n.withDefaults()));
        n = c.node();
        c = attempt(c, c.withNode(n.withMasqueradeAll(false)));
        n = c.node();
        c = attempt(c, c.withNode(n.withDetectLocal(NodeSettings.CLUSTER_CIDR, "")));
        n = c.node();
        return attempt(c, c.withNode(n.withNodePortAddresses(List.of(), List.of())));
    }

    private static RandomCluster replaceService(RandomCluster c, int i, ServiceObject s) {
        List<ServiceObject> l = new ArrayList<>(c.services());
        l.set(i, s);
        return c.withServices(l);
    }

    private static RandomCluster replaceSlice(RandomCluster c, int i, EndpointSliceObject s) {
        List<EndpointSliceObject> l = new ArrayList<>(c.slices());
        l.set(i, s);
        return c.withSlices(l);
    }

    private static EndpointSliceObject withEndpoints(EndpointSliceObject s, List<EndpointSliceObject.Endpoint> eps) {
        return new EndpointSliceObject(s.meta(), s.addressType(), s.ports(), eps);
    }

    /** A copy of {@code s} with the fields {@code change} puts, by record component name. */
    @SuppressWarnings("unchecked")
    static ServiceObject edit(ServiceObject s, java.util.function.Consumer<Map<String, Object>> change) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("meta", s.meta());
        f.put("type", s.type());
        f.put("clusterIP", s.clusterIP());
        f.put("clusterIPs", s.clusterIPs());
        f.put("ipFamilies", s.ipFamilies());
        f.put("ports", s.ports());
        f.put("externalIPs", s.externalIPs());
        f.put("loadBalancerIngress", s.loadBalancerIngress());
        f.put("loadBalancerSourceRanges", s.loadBalancerSourceRanges());
        f.put("sessionAffinity", s.sessionAffinity());
        f.put("sessionAffinityTimeoutSeconds", s.sessionAffinityTimeoutSeconds());
        f.put("externalTrafficPolicy", s.externalTrafficPolicy());
        f.put("internalTrafficPolicy", s.internalTrafficPolicy());
        f.put("healthCheckNodePort", s.healthCheckNodePort());
        f.put("trafficDistribution", s.trafficDistribution());
        int before = f.size();
        change.accept(f);
        if (f.size() != before) throw new IllegalArgumentException("unknown Service field among " + f.keySet());
        return new ServiceObject((ObjectMeta) f.get("meta"), (String) f.get("type"), (String) f.get("clusterIP"),
                (List<String>) f.get("clusterIPs"), (List<String>) f.get("ipFamilies"),
                (List<ServiceObject.PortSpec>) f.get("ports"), (List<String>) f.get("externalIPs"),
                (List<ServiceObject.LoadBalancerIngress>) f.get("loadBalancerIngress"),
                (List<String>) f.get("loadBalancerSourceRanges"), (String) f.get("sessionAffinity"),
                (Integer) f.get("sessionAffinityTimeoutSeconds"), (String) f.get("externalTrafficPolicy"),
                (String) f.get("internalTrafficPolicy"), (Integer) f.get("healthCheckNodePort"),
                (String) f.get("trafficDistribution"));
    }
}
