package io.nftproxy.trace;

import io.nftproxy.TestAddresses;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.NodeContext;

import java.util.List;

import static io.nftproxy.TestAddresses.cidr;
import static io.nftproxy.TestAddresses.ip;

/**
 * The node contexts the tracer tests render for (their Services are written with TestClusters), on
 * {@link TestAddresses}' plan: this node {@code node-a}, NodePorts on the LAN's addresses, the cluster CIDRs as the
 * local-traffic detector.
 */
final class TraceFixtures {
    static final String NODE = TestAddresses.NODE;
    static final String OTHER_NODE = TestAddresses.OTHER_NODE;
    static final String NODE_IP = TestAddresses.NODE_IP;
    static final String NODE_IP6 = TestAddresses.NODE_IP6;
    private static final List<IpPrefix> LAN = List.of(cidr(TestAddresses.LAN_CIDR), cidr(TestAddresses.LAN6_CIDR));

    private TraceFixtures() {}

    /** node-a with a ClusterCIDR local-traffic detector and NodePorts on the LAN, both families. */
    static NodeContext node() { return node(false); }

    static NodeContext node(boolean masqueradeAll) { return node(masqueradeAll, LAN); }

    /** node-a with no nodePortAddresses: NodePorts on every local address but loopback (upstream's MatchAll). */
    static NodeContext nodeMatchAll() { return node(false, List.of()); }

    private static NodeContext node(boolean masqueradeAll, List<IpPrefix> nodePortAddresses) {
        return node(masqueradeAll, nodePortAddresses, List.of(cidr(TestAddresses.CLUSTER_CIDR), cidr(TestAddresses.CLUSTER_CIDR6)));
    }

    /** node-a without a cluster CIDR: no local-traffic detector, so no "from outside cluster" masquerade. */
    static NodeContext nodeWithoutDetector() { return node(false, LAN, List.of()); }

    private static NodeContext node(boolean masqueradeAll, List<IpPrefix> nodePortAddresses, List<IpPrefix> clusterCidrs) {
        IpAddress v4 = ip(NODE_IP), v6 = ip(NODE_IP6);
        return new NodeContext(NODE, TestAddresses.ZONE, List.of(v4, v6), clusterCidrs, nodePortAddresses,
                List.of(v4, v6, ip("127.0.0.1"), ip("::1")), masqueradeAll, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }
}
