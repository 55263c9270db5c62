package io.nftproxy.trace;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.proxy.NodeContext;

import java.util.List;

/**
 * The node contexts the tracer tests render for (their Services are written with TestClusters), on this address plan:
 * <pre>
 *   this node  node-a  192.168.0.10      fd00:192:168::10   (pods 10.0.1.0/24, fd00:10::1:0/112)
 *   other node node-b  192.168.0.11                         (pods 10.0.2.0/24, fd00:10::2:0/112)
 *   cluster CIDR 10.0.0.0/8, fd00:10::/64; service CIDR 172.30.0.0/16, fd00:172:30::/112
 *   external clients 203.0.113.0/24, 198.18.0.0/15, 2001:db8::/32; externalIPs and LB VIPs 198.51.100.0/24
 * </pre>
 */
final class TraceFixtures {
    static final String NODE = "node-a";
    static final String OTHER_NODE = "node-b";
    static final String NODE_IP = "192.168.0.10";
    static final String NODE_IP6 = "fd00:192:168::10";

    private TraceFixtures() {}

    /** node-a with a ClusterCIDR local-traffic detector and NodePorts on 192.168.0.0/24 and fd00:192:168::/64. */
    static NodeContext node() { return node(false); }

    static NodeContext node(boolean masqueradeAll) {
        return node(masqueradeAll, List.of(IpPrefix.parse("192.168.0.0/24"), IpPrefix.parse("fd00:192:168::/64")));
    }

    /** node-a with no nodePortAddresses: NodePorts on every local address but loopback (upstream's MatchAll). */
    static NodeContext nodeMatchAll() { return node(false, List.of()); }

    private static NodeContext node(boolean masqueradeAll, List<IpPrefix> nodePortAddresses) {
        return node(masqueradeAll, nodePortAddresses, List.of(IpPrefix.parse("10.0.0.0/8"), IpPrefix.parse("fd00:10::/64")));
    }

    /** node-a without a cluster CIDR: no local-traffic detector, so no "from outside cluster" masquerade. */
    static NodeContext nodeWithoutDetector() {
        return node(false, List.of(IpPrefix.parse("192.168.0.0/24"), IpPrefix.parse("fd00:192:168::/64")), List.of());
    }

    private static NodeContext node(boolean masqueradeAll, List<IpPrefix> nodePortAddresses, List<IpPrefix> clusterCidrs) {
        return new NodeContext(NODE, "zone-a",
                List.of(IpAddress.parse(NODE_IP), IpAddress.parse(NODE_IP6)),
                clusterCidrs,
                nodePortAddresses,
                List.of(IpAddress.parse(NODE_IP), IpAddress.parse(NODE_IP6), IpAddress.parse("127.0.0.1"),
                        IpAddress.parse("::1")),
                masqueradeAll, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }
}
