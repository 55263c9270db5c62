package io.nftproxy.it.net;

import io.nftproxy.demo.Topology;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.NodeContext;

import java.util.List;

import static io.nftproxy.TestAddresses.*;

/**
 * The traffic topology on {@link io.nftproxy.TestAddresses}' plan, the one every fixture uses, and the backends'
 * ports. Only private and documentation ranges, and only inside namespaces the tests create.
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

    public static final int BACKEND_TCP_PORT = 8080;
    public static final int BACKEND_UDP_PORT = 5353;

    /** The namespaces of the traffic tests: {@code nftp-tr-<pid>-<role>}, roles as the tests name backends. */
    public static Topology.Plan plan() { return plan("tr"); }

    /** The same plan under another namespace name tag, for a test class that builds its own topology. */
    public static Topology.Plan plan(String tag) {
        return new Topology.Plan(tag, LAN_GATEWAY, LAN_PREFIX_LENGTH, LAN6_GATEWAY, LAN6_PREFIX_LENGTH,
                new Topology.NodePlan("node", NODE_IP, NODE_IP6, POD_CIDR, POD_CIDR6, NODE_POD_GATEWAY, NODE_POD_GATEWAY6,
                        List.of(new Topology.Pod("pod-a", POD_A, POD_A6), new Topology.Pod("pod-b", POD_B, POD_B6))),
                new Topology.NodePlan("remote-node", OTHER_NODE_IP, OTHER_NODE_IP6, OTHER_POD_CIDR, OTHER_POD_CIDR6,
                        OTHER_NODE_POD_GATEWAY, OTHER_NODE_POD_GATEWAY6, List.of(new Topology.Pod("remote-pod", OTHER_POD, OTHER_POD6))),
                new Topology.Pod("pod-client", POD_CLIENT, POD_CLIENT6),
                new Topology.ExternalPlan("external", List.of(EXTERNAL_CLIENT, DENIED_CLIENT), EXTERNAL_CIDR,
                        List.of(LB_VIP, EXTERNAL_IP)));
    }

    /** What the proxy on {@link io.nftproxy.TestAddresses#NODE} knows about its node. */
    public static NodeContext nodeContext() { return nodeContext(null); }

    /** As {@link #nodeContext()}, pod traffic recognised by {@code detector} (null: the cluster CIDRs). */
    public static NodeContext nodeContext(io.nftproxy.service.LocalTraffic detector) {
        return new NodeContext(NODE, ZONE,
                List.of(IpAddress.parse(NODE_IP), IpAddress.parse(NODE_IP6)),
                List.of(IpPrefix.parse(CLUSTER_CIDR), IpPrefix.parse(CLUSTER_CIDR6)),
                List.of(IpPrefix.parse(NODE_IP + "/32"), IpPrefix.parse(NODE_IP6 + "/128")),
                List.of(IpAddress.parse(NODE_IP), IpAddress.parse(NODE_POD_GATEWAY),
                        IpAddress.parse(NODE_IP6), IpAddress.parse(NODE_POD_GATEWAY6)),
                false, NodeContext.DEFAULT_MASQUERADE_BIT, true, detector);
    }
}
