package io.nftproxy.config;

import java.util.List;

/**
 * kube-proxy's {@code detectLocalMode} with the two settings of {@code detectLocal}: how the rules tell traffic from
 * this cluster's pods (not masqueraded to a ClusterIP, short-circuited for externalTrafficPolicy Local) from the rest.
 * Its rules are {@link ProxyConfig#validate()}'s.
 *
 * @param mode                ClusterCIDR (the clusterCIDR ranges), NodeCIDR (the Node object's spec.podCIDRs),
 *                            BridgeInterface (packets that enter on {@code bridgeInterface}) or InterfaceNamePrefix
 *                            (packets that enter on an interface whose name starts with {@code interfaceNamePrefix})
 */
public record LocalDetection(String mode, String bridgeInterface, String interfaceNamePrefix) {
    public static final String CLUSTER_CIDR = "ClusterCIDR";
    public static final String NODE_CIDR = "NodeCIDR";
    public static final String BRIDGE_INTERFACE = "BridgeInterface";
    public static final String INTERFACE_NAME_PREFIX = "InterfaceNamePrefix";
    public static final List<String> MODES = List.of(CLUSTER_CIDR, NODE_CIDR, BRIDGE_INTERFACE, INTERFACE_NAME_PREFIX);
    public static final LocalDetection DEFAULT = new LocalDetection(CLUSTER_CIDR, "", "");

    public LocalDetection {
        bridgeInterface = bridgeInterface == null ? "" : bridgeInterface;
        interfaceNamePrefix = interfaceNamePrefix == null ? "" : interfaceNamePrefix;
    }
}
