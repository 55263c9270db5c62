package io.nftproxy.node;

import io.nftproxy.cluster.NodeObject;
import io.nftproxy.proxy.Diagnostic;
import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.proxy.NodeContext;

import java.util.ArrayList;
import java.util.List;

/**
 * The node-level settings an operator gives (flags or the config file), and how they combine with what the node
 * itself says — its Node object (zone, addresses) and its interfaces' addresses — into the renderer's
 * {@link NodeContext}. One place, used by the offline commands and the daemon alike.
 *
 * @param nodeIPs           --node-ip: overrides the Node object's addresses (at most one per family)
 * @param nodePortAddresses "primary" (each family's first node IP) or CIDRs; a family without any matches all
 */
public record NodeSettings(String hostname, List<IpAddress> nodeIPs, List<IpPrefix> clusterCidrs,
                           List<String> nodePortAddresses, boolean masqueradeAll, int masqueradeBit) {
    public static final String PRIMARY = "primary";

    public NodeSettings {
        nodeIPs = List.copyOf(nodeIPs);
        clusterCidrs = List.copyOf(clusterCidrs);
        nodePortAddresses = List.copyOf(nodePortAddresses);
    }

    /** The context, and the node object's problems (a bad address) and notes for the operator. */
    public record Resolved(NodeContext node, List<Diagnostic> diagnostics, List<String> notes) {}

    /**
     * @param nodeObject     this node's Node object, or null when it is not known (yet)
     * @param localAddresses the node's interface addresses, or null when unknown: then the node IPs stand in
     */
    public Resolved resolve(NodeObject nodeObject, List<IpAddress> localAddresses) {
        List<Diagnostic> diags = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        List<IpAddress> ips = nodeIPs;
        if (ips.isEmpty() && nodeObject != null) ips = nodeObjectIPs(nodeObject, diags);
        if (ips.isEmpty()) notes.add("no node IP known (no Node object address, no --node-ip): NodePorts are accepted on every local address");
        NodeContext ctx = new NodeContext(hostname, nodeObject == null ? null : nodeObject.zone(), ips, clusterCidrs,
                nodePortCidrs(ips), localAddresses == null ? ips : localAddresses, masqueradeAll, masqueradeBit, true);
        return new Resolved(ctx, diags, notes);
    }

    /** The nodePortAddresses CIDRs: each family's primary node IP for "primary", else the given CIDRs. */
    public List<IpPrefix> nodePortCidrs(List<IpAddress> ips) {
        List<IpPrefix> out = new ArrayList<>();
        if (!nodePortAddresses.contains(PRIMARY)) {
            for (String s : nodePortAddresses) out.add(IpPrefix.parse(s));
            return out;
        }
        for (IpFamily f : IpFamily.values()) {
            ips.stream().filter(a -> a.family() == f).findFirst().ifPresent(a -> out.add(IpPrefix.host(a)));
        }
        return out;
    }

    /** What a node IP may be, for messages. */
    public static final String NODE_IP_ALLOWED = "a unicast address: not unspecified, loopback or multicast";

    /**
     * Whether {@code ip} can be a node's address: 0.0.0.0 would make the primary nodePortAddresses match nothing
     * useful, 127.0.0.1 would expose NodePorts on loopback, a multicast address is no host's (issue 10).
     */
    public static boolean usableNodeIP(IpAddress ip) {
        return !ip.isUnspecified() && !ip.isLoopback() && !ip.isMulticast();
    }

    /** InternalIP addresses first, then ExternalIP: the first of each family is the node's primary IP. */
    public static List<IpAddress> nodeObjectIPs(NodeObject node, List<Diagnostic> diags) {
        List<IpAddress> out = new ArrayList<>();
        for (String type : List.of("InternalIP", "ExternalIP")) {
            for (NodeObject.Address a : node.addresses()) {
                if (!type.equals(a.type())) continue;
                try {
                    IpAddress ip = IpAddress.parse(a.address());
                    if (!usableNodeIP(ip)) {
                        throw new InvalidInputException("status.addresses", a.address(), NODE_IP_ALLOWED);
                    }
                    if (!out.contains(ip)) out.add(ip);
                } catch (InvalidInputException e) {
                    diags.add(new Diagnostic("Node", node.meta().key(), "status.addresses", e.getMessage()));
                }
            }
        }
        return out;
    }
}
