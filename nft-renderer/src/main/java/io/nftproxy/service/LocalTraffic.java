package io.nftproxy.service;

import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;

import java.util.List;

/**
 * How the rules recognise traffic from this cluster's pods (kube-proxy's local-traffic detector): by source address
 * (the cluster CIDRs, or this node's pod CIDRs) or by the interface the packet came in on (the pods' bridge, or a
 * name prefix of their interfaces). Pod traffic to a ClusterIP is not masqueraded; pod traffic to an external
 * address of an externalTrafficPolicy Local service goes to every endpoint. The renderer turns it into nft matches
 * ({@code render.PodTrafficMatch}).
 */
public sealed interface LocalTraffic {
    /** {@code ip saddr 10.0.0.0/8}: the ranges of either family; a family without one detects nothing. */
    record BySource(List<IpPrefix> cidrs) implements LocalTraffic {
        public BySource {
            cidrs = List.copyOf(cidrs);
        }

        public List<IpPrefix> cidrs(IpFamily family) { return cidrs.stream().filter(c -> c.family() == family).toList(); }
    }

    /** {@code iifname "cbr0"}, or with {@code prefix} {@code iifname "veth*"}: the same for both families. */
    record ByInterface(String name, boolean prefix) implements LocalTraffic {
        public ByInterface {
            if (name == null || name.isEmpty() || name.length() > 15 || !name.matches("[^/\\s*\"\\\\:]+")) {
                throw new InvalidInputException(prefix ? "interfaceNamePrefix" : "bridgeInterface", String.valueOf(name),
                        "an interface name of 1 to 15 characters without / : * \" \\ or whitespace");
            }
        }
    }

    static LocalTraffic bySource(List<IpPrefix> cidrs) { return new BySource(cidrs); }

    static LocalTraffic byInterface(String name, boolean prefix) { return new ByInterface(name, prefix); }
}
