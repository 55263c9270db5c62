package io.nftproxy.demo;

import io.nftproxy.render.ChainNames;
import io.nftproxy.net.Protocol;
import io.nftproxy.service.ServicePortName;

import java.util.List;

/**
 * The cluster of {@code examples/} made real in namespaces: node {@code k8s-node-1} (192.168.10.20, the Node object
 * of {@code examples/cluster}), the pods behind {@code demo/hello} at the addresses its EndpointSlice lists (one on
 * k8s-node-1, two on k8s-node-2), a pod client on k8s-node-1 and an external client on the LAN. Pod network
 * 172.20.0.0/16 as in the examples; the external client uses a documentation range (198.51.100.0/24). IPv4 only.
 *
 * <pre>
 *  external 198.51.100.10 ──┐  LAN 192.168.10.0/24, router 192.168.10.1 (namespace "lan")
 *                           ├── k8s-node-1 192.168.10.20 ── hello-d7bpf 172.20.211.48, pod-client 172.20.211.9
 *                           └── k8s-node-2 192.168.10.21 ── hello-7k5d9 172.20.172.15, hello-dj4mf 172.20.172.17
 * </pre>
 */
public final class DemoCluster {
    private DemoCluster() {}

    /** Names every namespace {@code nftp-demo-<pid>-<role>}. */
    public static final String TAG = "demo";
    public static final String NODE = "k8s-node-1";
    public static final String REMOTE_NODE = "k8s-node-2";
    public static final String NODE_IP = "192.168.10.20";
    public static final String REMOTE_NODE_IP = "192.168.10.21";
    public static final String CLUSTER_CIDR = "172.20.0.0/16";
    public static final String CLUSTER_CIDR6 = "fd00:172:20::/64";
    /** The node's address on every pod veth: the source a local pod sees for masqueraded traffic. */
    public static final String NODE_POD_GATEWAY = "172.20.211.1";
    public static final String POD_CLIENT = "172.20.211.9";
    public static final String EXTERNAL_CLIENT = "198.51.100.10";
    public static final int BACKEND_PORT = 8080;

    /** {@code demo/hello}: the ClusterIP service the demo sends to and scales. */
    public static final String HELLO = "hello";
    public static final String HELLO_MANIFEST = "demo/hello.yaml";
    public static final String HELLO_CLUSTER_IP = "10.105.101.118";
    public static final int HELLO_PORT = 80;
    public static final ServicePortName HELLO_PORT_NAME = new ServicePortName("demo", HELLO, "http", Protocol.TCP);
    /** {@code demo/hello-np}: the same pods on NodePort 30080. */
    public static final int HELLO_NODE_PORT = 30080;

    /** One backend pod: its role (and echo server name), address and node, as {@code demo/hello}'s slice lists it. */
    public record Backend(String role, String address, String node) {}

    public static final List<Backend> BACKENDS = List.of(
            new Backend("hello-7k5d9", "172.20.172.15", REMOTE_NODE),
            new Backend("hello-dj4mf", "172.20.172.17", REMOTE_NODE),
            new Backend("hello-d7bpf", "172.20.211.48", NODE));
    /** The endpoint the scale-down removes. */
    public static final Backend SCALED_AWAY = BACKENDS.get(1);

    /** {@code service-VSI2YVQZ-demo/hello/tcp/http}: the chain that spreads hello's ClusterIP over its endpoints. */
    public static String helloChain() { return ChainNames.service(HELLO_PORT_NAME); }

    public static Topology.Plan plan() {
        return new Topology.Plan(TAG, "192.168.10.1", 24, null, 0,
                new Topology.NodePlan(NODE, NODE_IP, null, "172.20.211.0/24", null, NODE_POD_GATEWAY, null, pods(NODE)),
                new Topology.NodePlan(REMOTE_NODE, REMOTE_NODE_IP, null, "172.20.172.0/24", null, "172.20.172.1", null, pods(REMOTE_NODE)),
                new Topology.Pod("pod-client", POD_CLIENT, null),
                new Topology.ExternalPlan("external", List.of(EXTERNAL_CLIENT), "198.51.100.0/24", List.of()));
    }

    private static List<Topology.Pod> pods(String node) {
        return BACKENDS.stream().filter(b -> b.node().equals(node)).map(b -> new Topology.Pod(b.role(), b.address(), null)).toList();
    }
}
