package io.nftproxy;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;

/**
 * The one address plan of every test fixture in every module (renderer, tracer, goldens, kernel scenarios, the
 * traffic topology). Only private ranges (RFC 1918, ULA fd00::/8) and documentation ranges (RFC 5737 and 3849), so
 * no test can aim at a real network; traffic runs only inside namespaces the tests create.
 *
 * <pre>
 *  external clients 198.51.100.0/24 (allowed source range 198.51.100.0/25), 2001:db8::/32
 *        └──────── LAN 192.168.10.0/24, fd00:192:168:10::/64, router .1 ────────┐
 *  this node  node-a 192.168.10.20  fd00:192:168:10::20         other node node-b 192.168.10.21  fd00:192:168:10::21
 *    pods 10.0.1.0/24  fd00:10::1:0/112 (gateway .1 / ::1:1)      pods 10.0.2.0/24  fd00:10::2:0/112 (gateway .1 / ::2:1)
 *  cluster CIDR 10.0.0.0/8, fd00:10::/64        service CIDR 172.30.0.0/16, fd00:172:30::/108
 *  LoadBalancer VIPs 203.0.113.0/24             externalIPs 192.0.2.0/24
 * </pre>
 */
public final class TestAddresses {
    private TestAddresses() {}

    public static final String NODE = "node-a";
    public static final String OTHER_NODE = "node-b";
    public static final String ZONE = "zone-a";

    public static final String LAN_CIDR = "192.168.10.0/24";
    public static final int LAN_PREFIX_LENGTH = 24;
    /**
     * The LAN's router. In the traffic topology it has no default route, so anything the node sends it for an
     * unknown address is refused with ICMP unreachable at once.
     */
    public static final String LAN_GATEWAY = "192.168.10.1";
    public static final String NODE_IP = "192.168.10.20";
    public static final String OTHER_NODE_IP = "192.168.10.21";

    public static final String CLUSTER_CIDR = "10.0.0.0/8";
    public static final String POD_CIDR = "10.0.1.0/24";
    public static final String OTHER_POD_CIDR = "10.0.2.0/24";
    /** The node's address on each of its pod veths: what node-to-pod and hairpin masquerade show. */
    public static final String NODE_POD_GATEWAY = "10.0.1.1";
    public static final String OTHER_NODE_POD_GATEWAY = "10.0.2.1";
    public static final String POD_A = "10.0.1.10";
    public static final String POD_B = "10.0.1.11";
    /** A pod on this node that serves no Service. */
    public static final String POD_CLIENT = "10.0.1.50";
    public static final String OTHER_POD = "10.0.2.10";

    public static final String SERVICE_CIDR = "172.30.0.0/16";
    public static final String LB_VIP_CIDR = "203.0.113.0/24";
    public static final String LB_VIP = "203.0.113.10";
    public static final String EXTERNAL_IP_CIDR = "192.0.2.0/24";
    public static final String EXTERNAL_IP = "192.0.2.10";

    public static final String EXTERNAL_CIDR = "198.51.100.0/24";
    public static final String EXTERNAL_CLIENT = "198.51.100.10";
    /** The part of {@link #EXTERNAL_CIDR} a LoadBalancer's source ranges let in, in the tests that have them. */
    public static final String ALLOWED_SOURCE_RANGE = "198.51.100.0/25";
    /** An external client outside {@link #ALLOWED_SOURCE_RANGE}. */
    public static final String DENIED_CLIENT = "198.51.100.200";

    public static final String LAN6_CIDR = "fd00:192:168:10::/64";
    public static final int LAN6_PREFIX_LENGTH = 64;
    public static final String LAN6_GATEWAY = "fd00:192:168:10::1";
    public static final String NODE_IP6 = "fd00:192:168:10::20";
    public static final String OTHER_NODE_IP6 = "fd00:192:168:10::21";
    public static final String CLUSTER_CIDR6 = "fd00:10::/64";
    public static final String POD_CIDR6 = "fd00:10::1:0/112";
    public static final String OTHER_POD_CIDR6 = "fd00:10::2:0/112";
    public static final String NODE_POD_GATEWAY6 = "fd00:10::1:1";
    public static final String OTHER_NODE_POD_GATEWAY6 = "fd00:10::2:1";
    public static final String POD_A6 = "fd00:10::1:10";
    public static final String POD_B6 = "fd00:10::1:11";
    public static final String POD_CLIENT6 = "fd00:10::1:50";
    public static final String OTHER_POD6 = "fd00:10::2:10";
    public static final String SERVICE_CIDR6 = "fd00:172:30::/108";
    public static final String EXTERNAL_CIDR6 = "2001:db8::/32";
    public static final String EXTERNAL_CLIENT6 = "2001:db8::7";

    public static IpAddress ip(String address) { return IpAddress.parse(address); }

    public static IpPrefix cidr(String prefix) { return IpPrefix.parse(prefix); }
}
