package io.nftproxy.service;

import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;

import java.util.List;

/**
 * What the proxy knows about the node it runs on. {@code nodePortAddresses} are CIDRs with "primary" already
 * resolved by the caller; a family with no CIDRs matches every local address (upstream's MatchAll).
 * {@code localAddresses} are the node's interface addresses, from which {@code nodeport-ips} is filled.
 * {@code localTraffic} tells pod traffic from the rest; the cluster CIDRs when not given.
 */
public record NodeContext(String nodeName, String zone, List<IpAddress> nodeIPs, List<IpPrefix> clusterCidrs,
                          List<IpPrefix> nodePortAddresses, List<IpAddress> localAddresses, boolean masqueradeAll,
                          int masqueradeBit, boolean preferSameNodeEnabled, LocalTraffic localTraffic) {
    public static final int DEFAULT_MASQUERADE_BIT = 14;

    public NodeContext {
        nodeName = Names.subdomain(nodeName, "hostnameOverride");
        nodeIPs = List.copyOf(nodeIPs);
        clusterCidrs = List.copyOf(clusterCidrs);
        nodePortAddresses = List.copyOf(nodePortAddresses);
        localAddresses = List.copyOf(localAddresses);
        if (localTraffic == null) localTraffic = LocalTraffic.bySource(clusterCidrs);
        if (masqueradeBit < 0 || masqueradeBit > 31) {
            throw new InvalidInputException("masqueradeBit", String.valueOf(masqueradeBit), "an integer 0..31");
        }
    }

    /** Pod traffic recognised by the cluster CIDRs (kube-proxy's default detector). */
    public NodeContext(String nodeName, String zone, List<IpAddress> nodeIPs, List<IpPrefix> clusterCidrs,
                       List<IpPrefix> nodePortAddresses, List<IpAddress> localAddresses, boolean masqueradeAll,
                       int masqueradeBit, boolean preferSameNodeEnabled) {
        this(nodeName, zone, nodeIPs, clusterCidrs, nodePortAddresses, localAddresses, masqueradeAll, masqueradeBit,
                preferSameNodeEnabled, null);
    }

    /** A node with no addresses known and the upstream defaults otherwise. */
    public static NodeContext minimal(String nodeName) {
        return new NodeContext(nodeName, null, List.of(), List.of(), List.of(), List.of(), false,
                DEFAULT_MASQUERADE_BIT, true);
    }

    public int masqueradeMark() { return 1 << masqueradeBit; }

    public List<IpPrefix> clusterCidrs(IpFamily f) { return clusterCidrs.stream().filter(c -> c.family() == f).toList(); }

    public List<IpAddress> nodeIPs(IpFamily f) { return nodeIPs.stream().filter(a -> a.family() == f).toList(); }

    /** True when NodePorts are accepted on every local address of this family (no CIDR of the family given). */
    public boolean nodePortMatchAll(IpFamily f) {
        List<IpPrefix> cidrs = nodePortAddresses.stream().filter(c -> c.family() == f).toList();
        return cidrs.isEmpty() || cidrs.stream().anyMatch(IpPrefix::isMatchAll);
    }

    /** The addresses of {@code nodeport-ips}: local, inside a nodePortAddresses CIDR, never loopback. */
    public List<IpAddress> nodePortIPs(IpFamily f) {
        return localAddresses.stream()
                .filter(a -> a.family() == f && !a.isLoopback())
                .filter(a -> nodePortAddresses.stream().anyMatch(c -> c.contains(a)))
                .distinct().sorted().toList();
    }

    /** Every address of this node, declared or on an interface, without loopback: what no Service may pose as. */
    public List<IpAddress> ownAddresses() {
        return java.util.stream.Stream.concat(nodeIPs.stream(), localAddresses.stream())
                .filter(a -> !a.isLoopback()).distinct().sorted().toList();
    }

    public NodeContext withLocalAddresses(List<IpAddress> addrs) {
        return new NodeContext(nodeName, zone, nodeIPs, clusterCidrs, nodePortAddresses, addrs,
                masqueradeAll, masqueradeBit, preferSameNodeEnabled, localTraffic);
    }
}
