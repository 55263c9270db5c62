package io.nftproxy.it.net;

import io.nftproxy.demo.Topology;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.proxy.NodeContext;

import java.util.List;

/**
 * The one address plan of the traffic topology, the same plan the renderer's {@code TestClusters} uses: node
 * 192.168.10.20 on a LAN 192.168.10.0/24, pods in 10.0.0.0/8 (10.0.1.0/24 on this node, 10.0.2.0/24 on the other),
 * services 172.30.0.0/16, LB VIPs 203.0.113.0/24, externalIPs 192.0.2.0/24, external clients 198.51.100.0/24.
 * IPv6 mirrors it inside fd00::/8 (ULA): LAN fd00:192:168:10::/64, pods fd00:10::/64 (fd00:10::1:0/112 here,
 * fd00:10::2:0/112 on the other node), services fd00:172:30::/108. Only private and documentation ranges, and only
 * inside namespaces the tests create.
 *
 * <pre>
 *  external client 198.51.100.10 (+ .200)         LAN bridge in "lan", gateway 192.168.10.1
 *        └──────────────── lan ───────────────┬──────────────────────────┐
 *                                  node 192.168.10.20              remote node 192.168.10.21
 *                        10.0.1.1 on each routed pod veth           10.0.2.1 ── remote pod 10.0.2.10
 *                 pod-a 10.0.1.10, pod-b 10.0.1.11, pod client 10.0.1.50
 * </pre>
 */
public final class TestNetworks {
    private TestNetworks() {}

    public static final String NODE_NAME = "node-a";
    public static final String REMOTE_NODE_NAME = "node-b";

    public static final int LAN_PREFIX_LENGTH = 24;
    /** The LAN's router; it has no default route, so anything the node sends it for an unknown address is refused with ICMP unreachable at once. */
    public static final String LAN_GATEWAY = "192.168.10.1";
    public static final String NODE_IP = "192.168.10.20";
    public static final String REMOTE_NODE_IP = "192.168.10.21";

    public static final String CLUSTER_CIDR = "10.0.0.0/8";
    public static final String POD_CIDR = "10.0.1.0/24";
    public static final String REMOTE_POD_CIDR = "10.0.2.0/24";
    /** The node's address on every routed pod veth (as a /32); what hairpin and node-to-pod masquerade show. */
    public static final String NODE_POD_GATEWAY = "10.0.1.1";
    public static final String REMOTE_NODE_POD_GATEWAY = "10.0.2.1";
    public static final String POD_A = "10.0.1.10";
    public static final String POD_B = "10.0.1.11";
    public static final String POD_CLIENT = "10.0.1.50";
    public static final String REMOTE_POD = "10.0.2.10";

    public static final String EXTERNAL_CIDR = "198.51.100.0/24";
    public static final String EXTERNAL_CLIENT = "198.51.100.10";
    /** A second address of the external client, outside {@link #ALLOWED_SOURCE_RANGE}. */
    public static final String EXTERNAL_DENIED_CLIENT = "198.51.100.200";
    public static final String ALLOWED_SOURCE_RANGE = "198.51.100.0/25";

    public static final String SERVICE_CIDR = "172.30.0.0/16";
    public static final String LB_VIP = "203.0.113.10";
    public static final String EXTERNAL_IP = "192.0.2.10";

    public static final int LAN6_PREFIX_LENGTH = 64;
    public static final String LAN6_GATEWAY = "fd00:192:168:10::1";
    public static final String NODE_IP6 = "fd00:192:168:10::20";
    public static final String REMOTE_NODE_IP6 = "fd00:192:168:10::21";
    public static final String CLUSTER_CIDR6 = "fd00:10::/64";
    public static final String POD_CIDR6 = "fd00:10::1:0/112";
    public static final String REMOTE_POD_CIDR6 = "fd00:10::2:0/112";
    public static final String NODE_POD_GATEWAY6 = "fd00:10::1:1";
    public static final String REMOTE_NODE_POD_GATEWAY6 = "fd00:10::2:1";
    public static final String POD_A6 = "fd00:10::1:10";
    public static final String POD_B6 = "fd00:10::1:11";
    public static final String POD_CLIENT6 = "fd00:10::1:50";
    public static final String REMOTE_POD6 = "fd00:10::2:10";
    public static final String SERVICE_CIDR6 = "fd00:172:30::/108";

    public static final int BACKEND_TCP_PORT = 8080;
    public static final int BACKEND_UDP_PORT = 5353;

    /** The namespaces of the traffic tests: {@code nftp-tr-<pid>-<role>}, roles as the tests name backends. */
    public static Topology.Plan plan() {
        return new Topology.Plan("tr", LAN_GATEWAY, LAN_PREFIX_LENGTH, LAN6_GATEWAY, LAN6_PREFIX_LENGTH,
                new Topology.NodePlan("node", NODE_IP, NODE_IP6, POD_CIDR, POD_CIDR6, NODE_POD_GATEWAY, NODE_POD_GATEWAY6,
                        List.of(new Topology.Pod("pod-a", POD_A, POD_A6), new Topology.Pod("pod-b", POD_B, POD_B6))),
                new Topology.NodePlan("remote-node", REMOTE_NODE_IP, REMOTE_NODE_IP6, REMOTE_POD_CIDR, REMOTE_POD_CIDR6,
                        REMOTE_NODE_POD_GATEWAY, REMOTE_NODE_POD_GATEWAY6, List.of(new Topology.Pod("remote-pod", REMOTE_POD, REMOTE_POD6))),
                new Topology.Pod("pod-client", POD_CLIENT, POD_CLIENT6),
                new Topology.ExternalPlan("external", List.of(EXTERNAL_CLIENT, EXTERNAL_DENIED_CLIENT), EXTERNAL_CIDR,
                        List.of(LB_VIP, EXTERNAL_IP)));
    }

    /** What the proxy on {@link #NODE_NAME} knows about its node. */
    public static NodeContext nodeContext() {
        return new NodeContext(NODE_NAME, "zone-a",
                List.of(IpAddress.parse(NODE_IP), IpAddress.parse(NODE_IP6)),
                List.of(IpPrefix.parse(CLUSTER_CIDR), IpPrefix.parse(CLUSTER_CIDR6)),
                List.of(IpPrefix.parse(NODE_IP + "/32"), IpPrefix.parse(NODE_IP6 + "/128")),
                List.of(IpAddress.parse(NODE_IP), IpAddress.parse(NODE_POD_GATEWAY),
                        IpAddress.parse(NODE_IP6), IpAddress.parse(NODE_POD_GATEWAY6)),
                false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }
}
