package io.nftproxy.it.net;

import io.nftproxy.TestAddresses;
import io.nftproxy.demo.Topology;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.proxy.NodeContext;

import java.util.List;

/**
 * The traffic topology on {@link TestAddresses}' plan, the one every fixture uses (names as the traffic tests know
 * them: the other node is the "remote" one). Only private and documentation ranges, and only inside namespaces the
 * tests create.
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

    public static final String NODE_NAME = TestAddresses.NODE;
    public static final String REMOTE_NODE_NAME = TestAddresses.OTHER_NODE;

    public static final int LAN_PREFIX_LENGTH = TestAddresses.LAN_PREFIX_LENGTH;
    /** The LAN's router; it has no default route, so anything the node sends it for an unknown address is refused with ICMP unreachable at once. */
    public static final String LAN_GATEWAY = TestAddresses.LAN_GATEWAY;
    public static final String NODE_IP = TestAddresses.NODE_IP;
    public static final String REMOTE_NODE_IP = TestAddresses.OTHER_NODE_IP;

    public static final String CLUSTER_CIDR = TestAddresses.CLUSTER_CIDR;
    public static final String POD_CIDR = TestAddresses.POD_CIDR;
    public static final String REMOTE_POD_CIDR = TestAddresses.OTHER_POD_CIDR;
    /** The node's address on every routed pod veth (as a /32); what hairpin and node-to-pod masquerade show. */
    public static final String NODE_POD_GATEWAY = TestAddresses.NODE_POD_GATEWAY;
    public static final String REMOTE_NODE_POD_GATEWAY = TestAddresses.OTHER_NODE_POD_GATEWAY;
    public static final String POD_A = TestAddresses.POD_A;
    public static final String POD_B = TestAddresses.POD_B;
    public static final String POD_CLIENT = TestAddresses.POD_CLIENT;
    public static final String REMOTE_POD = TestAddresses.OTHER_POD;

    public static final String EXTERNAL_CIDR = TestAddresses.EXTERNAL_CIDR;
    public static final String EXTERNAL_CLIENT = TestAddresses.EXTERNAL_CLIENT;
    /** A second address of the external client, outside {@link #ALLOWED_SOURCE_RANGE}. */
    public static final String EXTERNAL_DENIED_CLIENT = TestAddresses.DENIED_CLIENT;
    public static final String ALLOWED_SOURCE_RANGE = TestAddresses.ALLOWED_SOURCE_RANGE;

    public static final String SERVICE_CIDR = TestAddresses.SERVICE_CIDR;
    public static final String LB_VIP = TestAddresses.LB_VIP;
    public static final String EXTERNAL_IP = TestAddresses.EXTERNAL_IP;

    public static final int LAN6_PREFIX_LENGTH = TestAddresses.LAN6_PREFIX_LENGTH;
    public static final String LAN6_GATEWAY = TestAddresses.LAN6_GATEWAY;
    public static final String NODE_IP6 = TestAddresses.NODE_IP6;
    public static final String REMOTE_NODE_IP6 = TestAddresses.OTHER_NODE_IP6;
    public static final String CLUSTER_CIDR6 = TestAddresses.CLUSTER_CIDR6;
    public static final String POD_CIDR6 = TestAddresses.POD_CIDR6;
    public static final String REMOTE_POD_CIDR6 = TestAddresses.OTHER_POD_CIDR6;
    public static final String NODE_POD_GATEWAY6 = TestAddresses.NODE_POD_GATEWAY6;
    public static final String REMOTE_NODE_POD_GATEWAY6 = TestAddresses.OTHER_NODE_POD_GATEWAY6;
    public static final String POD_A6 = TestAddresses.POD_A6;
    public static final String POD_B6 = TestAddresses.POD_B6;
    public static final String POD_CLIENT6 = TestAddresses.POD_CLIENT6;
    public static final String REMOTE_POD6 = TestAddresses.OTHER_POD6;
    public static final String SERVICE_CIDR6 = TestAddresses.SERVICE_CIDR6;

    public static final int BACKEND_TCP_PORT = 8080;
    public static final int BACKEND_UDP_PORT = 5353;

    /** The namespaces of the traffic tests: {@code nftp-tr-<pid>-<role>}, roles as the tests name backends. */
    public static Topology.Plan plan() { return plan("tr"); }

    /** The same plan under another namespace name tag, for a test class that builds its own topology. */
    public static Topology.Plan plan(String tag) {
        return new Topology.Plan(tag, LAN_GATEWAY, LAN_PREFIX_LENGTH, LAN6_GATEWAY, LAN6_PREFIX_LENGTH,
                new Topology.NodePlan("node", NODE_IP, NODE_IP6, POD_CIDR, POD_CIDR6, NODE_POD_GATEWAY, NODE_POD_GATEWAY6,
                        List.of(new Topology.Pod("pod-a", POD_A, POD_A6), new Topology.Pod("pod-b", POD_B, POD_B6))),
                new Topology.NodePlan("remote-node", REMOTE_NODE_IP, REMOTE_NODE_IP6, REMOTE_POD_CIDR, REMOTE_POD_CIDR6,
                        REMOTE_NODE_POD_GATEWAY, REMOTE_NODE_POD_GATEWAY6, List.of(new Topology.Pod("remote-pod", REMOTE_POD, REMOTE_POD6))),
                new Topology.Pod("pod-client", POD_CLIENT, POD_CLIENT6),
                new Topology.ExternalPlan("external", List.of(EXTERNAL_CLIENT, EXTERNAL_DENIED_CLIENT), EXTERNAL_CIDR,
                        List.of(LB_VIP, EXTERNAL_IP)));
    }

    /** What the proxy on {@link #NODE_NAME} knows about its node. */
    public static NodeContext nodeContext() { return nodeContext(null); }

    /** As {@link #nodeContext()}, pod traffic recognised by {@code detector} (null: the cluster CIDRs). */
    public static NodeContext nodeContext(io.nftproxy.proxy.LocalTraffic detector) {
        return new NodeContext(NODE_NAME, TestAddresses.ZONE,
                List.of(IpAddress.parse(NODE_IP), IpAddress.parse(NODE_IP6)),
                List.of(IpPrefix.parse(CLUSTER_CIDR), IpPrefix.parse(CLUSTER_CIDR6)),
                List.of(IpPrefix.parse(NODE_IP + "/32"), IpPrefix.parse(NODE_IP6 + "/128")),
                List.of(IpAddress.parse(NODE_IP), IpAddress.parse(NODE_POD_GATEWAY),
                        IpAddress.parse(NODE_IP6), IpAddress.parse(NODE_POD_GATEWAY6)),
                false, NodeContext.DEFAULT_MASQUERADE_BIT, true, detector);
    }
}
