package io.nftproxy.node;

import io.nftproxy.cluster.NodeObject;
import io.nftproxy.config.LocalDetection;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.service.LocalTraffic;
import io.nftproxy.service.Diagnostic;
import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.NodeContext;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * How the node settings of a {@link ProxyConfig} combine with what the node itself says — its Node object (zone,
 * addresses) and its interfaces' addresses — into the renderer's {@link NodeContext}. One place, used by the offline
 * commands and the daemon alike. --node-ip wins over the Node object's addresses; a bindAddress that is not
 * unspecified is this node's IP of its family and its primary family, over both, as kube-proxy's detectNodeIPs does.
 */
public final class NodeResolver {
    private NodeResolver() {}

    /** The context, and the node object's problems (a bad address) and notes for the operator. */
    public record Resolved(NodeContext node, List<Diagnostic> diagnostics, List<String> notes) {}

    /**
     * @param nodeObject     this node's Node object, or null when it is not known (yet)
     * @param localAddresses the node's interface addresses, or null when unknown: then the node IPs stand in
     */
    public static Resolved resolve(ProxyConfig config, NodeObject nodeObject, List<IpAddress> localAddresses) {
        List<Diagnostic> diags = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        List<IpAddress> ips = config.nodeIPs();
        IpAddress bindAddress = config.bindAddress();
        if (ips.isEmpty() && nodeObject != null) ips = nodeObjectIPs(nodeObject, diags);
        if (bindAddress != null && !bindAddress.isUnspecified()) {
            ips = Stream.concat(Stream.of(bindAddress), ips.stream().filter(a -> a.family() != bindAddress.family())).toList();
        }
        if (ips.isEmpty()) notes.add("no node IP known (no Node object address, no --node-ip): NodePorts are accepted on every local address");
        NodeContext ctx = new NodeContext(config.hostnameOverride(), nodeObject == null ? null : nodeObject.zone(), ips,
                config.clusterCidrs(), config.nodePortAddresses().resolve(ips), localAddresses == null ? ips : localAddresses,
                config.masqueradeAll(), config.masqueradeBit(), true, localTraffic(config, nodeObject, diags, notes));
        return new Resolved(ctx, diags, notes);
    }

    /**
     * The renderer's detector for the configuration's {@code detectLocal}. NodeCIDR without a Node object, or one without podCIDRs,
     * detects nothing until they appear (kube-proxy waits for them at start; the daemon re-renders when they come).
     */
    private static LocalTraffic localTraffic(ProxyConfig config, NodeObject nodeObject, List<Diagnostic> diags, List<String> notes) {
        LocalDetection localDetection = config.detectLocal();
        return switch (localDetection.mode()) {
            case LocalDetection.NODE_CIDR -> {
                List<IpPrefix> pods = nodeObject == null ? List.of() : podCidrs(nodeObject, diags);
                if (pods.isEmpty()) notes.add("detectLocalMode NodeCIDR: the Node object has no spec.podCIDRs (yet); no traffic counts as a pod's");
                yield LocalTraffic.bySource(pods);
            }
            case LocalDetection.BRIDGE_INTERFACE -> LocalTraffic.byInterface(localDetection.bridgeInterface(), false);
            case LocalDetection.INTERFACE_NAME_PREFIX -> LocalTraffic.byInterface(localDetection.interfaceNamePrefix(), true);
            default -> LocalTraffic.bySource(config.clusterCidrs());
        };
    }

    /** spec.podCIDRs, at most one per family as the API server allows; a bad entry is skipped with a diagnostic. */
    private static List<IpPrefix> podCidrs(NodeObject node, List<Diagnostic> diags) {
        List<IpPrefix> out = new ArrayList<>();
        for (String s : node.podCIDRs()) {
            try {
                IpPrefix p = IpPrefix.parse(s);
                if (out.stream().noneMatch(q -> q.family() == p.family())) out.add(p);
            } catch (InvalidInputException e) {
                diags.add(new Diagnostic("Node", node.meta().key(), "spec.podCIDRs", e.getMessage()));
            }
        }
        return out;
    }

    /** InternalIP addresses first, then ExternalIP: the first of each family is the node's primary IP. */
    public static List<IpAddress> nodeObjectIPs(NodeObject node, List<Diagnostic> diags) {
        List<IpAddress> out = new ArrayList<>();
        for (String type : List.of("InternalIP", "ExternalIP")) {
            for (NodeObject.Address a : node.addresses()) {
                if (!type.equals(a.type())) continue;
                try {
                    IpAddress ip = IpAddress.parse(a.address());
                    if (!ProxyConfig.usableNodeIP(ip)) {
                        throw new InvalidInputException("status.addresses", a.address(), ProxyConfig.NODE_IP_ALLOWED);
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
