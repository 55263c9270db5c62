package io.nftproxy.it.diff;

import io.nftproxy.TestAddresses;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The node both proxies run as, and the proxy configuration they share: rendered as one KubeProxyConfiguration file
 * that kube-proxy and nftproxy each read ({@code --config}), so a setting cannot reach one proxy and miss the other.
 * The node's addresses are put on an interface of each proxy's namespace.
 *
 * @param nodeName          the Node object both proxies are told they are ({@code hostnameOverride})
 * @param addresses         the node's interface addresses with prefix length ({@code 192.168.10.20/24}); the cluster's
 *                          Node object must report the same ones
 * @param clusterCidr       {@code clusterCIDR}, comma-separated per family as kube-proxy takes it; empty for none
 * @param detectLocalMode   ClusterCIDR, NodeCIDR, BridgeInterface or InterfaceNamePrefix
 * @param nodePortAddresses the {@code nodePortAddresses} list; empty for upstream's default
 */
public record NodeSettings(String nodeName, List<String> addresses, String clusterCidr, String detectLocalMode,
                           String bridgeInterface, String interfaceNamePrefix, List<String> nodePortAddresses,
                           boolean masqueradeAll) {
    public NodeSettings {
        addresses = List.copyOf(addresses);
        nodePortAddresses = List.copyOf(nodePortAddresses);
    }

    /** The test address plan's node (TestAddresses), dual-stack, kube-proxy's defaults otherwise. */
    public static NodeSettings dualStackNode() {
        return new NodeSettings(TestAddresses.NODE,
                List.of(TestAddresses.NODE_IP + "/" + TestAddresses.LAN_PREFIX_LENGTH,
                        TestAddresses.NODE_IP6 + "/" + TestAddresses.LAN6_PREFIX_LENGTH),
                TestAddresses.CLUSTER_CIDR + "," + TestAddresses.CLUSTER_CIDR6, "ClusterCIDR", "", "", List.of(), false);
    }

    public NodeSettings detectLocal(String mode, String bridge, String prefix) {
        return new NodeSettings(nodeName, addresses, clusterCidr, mode, bridge, prefix, nodePortAddresses, masqueradeAll);
    }

    public NodeSettings nodePortAddresses(List<String> cidrs) {
        return new NodeSettings(nodeName, addresses, clusterCidr, detectLocalMode, bridgeInterface, interfaceNamePrefix, cidrs, masqueradeAll);
    }

    public NodeSettings masqueradeAll(boolean on) {
        return new NodeSettings(nodeName, addresses, clusterCidr, detectLocalMode, bridgeInterface, interfaceNamePrefix, nodePortAddresses, on);
    }

    /** The address part of {@link #addresses()}. */
    public List<String> hostAddresses() { return addresses.stream().map(a -> a.substring(0, a.indexOf('/'))).toList(); }

    /**
     * The configuration file. Conntrack sizing and timeouts are zero (leave the kernel's alone): nf_conntrack_max
     * is not per namespace, and no test may change the host's settings.
     */
    public String configFile(Path kubeconfig, int healthzPort, int metricsPort) {
        List<String> y = new ArrayList<>(List.of(
                "apiVersion: kubeproxy.config.k8s.io/v1alpha1",
                "kind: KubeProxyConfiguration",
                "mode: nftables",
                "hostnameOverride: " + nodeName,
                "clientConnection:",
                "  kubeconfig: " + kubeconfig,
                "clusterCIDR: \"" + clusterCidr + "\"",
                "detectLocalMode: " + detectLocalMode,
                "detectLocal:",
                "  bridgeInterface: \"" + bridgeInterface + "\"",
                "  interfaceNamePrefix: \"" + interfaceNamePrefix + "\"",
                "healthzBindAddress: 127.0.0.1:" + healthzPort,
                "metricsBindAddress: 127.0.0.1:" + metricsPort,
                "nftables:",
                "  masqueradeAll: " + masqueradeAll,
                "conntrack:",
                "  maxPerCore: 0",
                "  min: 0",
                "  tcpEstablishedTimeout: 0s",
                "  tcpCloseWaitTimeout: 0s"));
        if (nodePortAddresses.isEmpty()) {
            y.add("nodePortAddresses: []");
        } else {
            y.add("nodePortAddresses:");
            nodePortAddresses.forEach(c -> y.add("- \"" + c + "\""));
        }
        return String.join("\n", y) + "\n";
    }

    @Override public String toString() {
        return "detectLocalMode=" + detectLocalMode + (bridgeInterface.isEmpty() ? "" : " bridgeInterface=" + bridgeInterface)
                + (interfaceNamePrefix.isEmpty() ? "" : " interfaceNamePrefix=" + interfaceNamePrefix)
                + " nodePortAddresses=" + nodePortAddresses + " masqueradeAll=" + masqueradeAll;
    }
}
