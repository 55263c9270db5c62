package io.nftproxy.cli;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.NodeContext;
import io.nftproxy.trace.Origin;

import java.util.Locale;
import java.util.Optional;

/**
 * Where a traced packet enters the node, and why: given with {@code --from}, or guessed from {@code --src}.
 * The guess checks the node's own addresses before the cluster CIDRs because an address of this node is a local
 * process's source whatever range it lies in.
 */
record OriginChoice(Origin origin, String reason) {
    static OriginChoice guess(IpAddress src, NodeContext node) {
        if (src.isLoopback()) {
            return new OriginChoice(Origin.HOST, "--src " + src + " is a loopback address");
        }
        if (node.nodeIPs().contains(src) || node.localAddresses().contains(src)) {
            return new OriginChoice(Origin.HOST, "--src " + src + " is an address of node " + node.nodeName());
        }
        Optional<IpPrefix> cidr = node.clusterCidrs().stream().filter(c -> c.contains(src)).findFirst();
        if (cidr.isPresent()) {
            return new OriginChoice(Origin.POD, "--src " + src + " is inside --cluster-cidr " + cidr.get());
        }
        String why = node.clusterCidrs(src.family()).isEmpty()
                ? "no --cluster-cidr of its family is given" : "it is outside --cluster-cidr";
        return new OriginChoice(Origin.EXTERNAL, "--src " + src + " is not an address of node " + node.nodeName()
                + " and " + why);
    }

    /** The first line of a trace: the origin in its flag's spelling, and why. */
    String line() { return "origin: " + origin.name().toLowerCase(Locale.ROOT) + " (" + reason + ")"; }

    /** A warning when {@code --from} contradicts what the rules will see of {@code --src}, else null. */
    String mismatch(IpAddress src, NodeContext node) {
        boolean local = src.isLoopback() || node.nodeIPs().contains(src) || node.localAddresses().contains(src);
        boolean inCluster = node.clusterCidrs().stream().anyMatch(c -> c.contains(src));
        if (origin == Origin.HOST && !local) {
            return "--from host with --src " + src + ", which is not an address of node " + node.nodeName()
                    + " (--node-ip or the Node object): rules matching 'fib saddr type local' will not match it";
        }
        if (origin == Origin.POD && !inCluster) {
            return "--from pod with --src " + src + ", which is outside every --cluster-cidr: the rules treat it as "
                    + "traffic from outside the cluster";
        }
        return null;
    }
}
