package io.nftproxy.config;

import java.util.List;

/**
 * kube-proxy's {@code detectLocalMode} with the two settings of {@code detectLocal}: how the rules tell traffic from
 * this cluster's pods (not masqueraded to a ClusterIP, short-circuited for externalTrafficPolicy Local) from the rest.
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

    /** Checks the mode and that the mode's own setting is given and is an interface name; as kube-proxy's validation. */
    public LocalDetection validate() {
        if (!MODES.contains(mode)) throw new ConfigException("detectLocalMode", mode, String.join(", ", MODES));
        if (mode.equals(BRIDGE_INTERFACE)) interfaceName("detectLocal.bridgeInterface", bridgeInterface);
        if (mode.equals(INTERFACE_NAME_PREFIX)) interfaceName("detectLocal.interfaceNamePrefix", interfaceNamePrefix);
        return this;
    }

    /**
     * What the kernel allows in a name (IFNAMSIZ 16 with the terminating zero; no '/', whitespace), and no '*',
     * quote or backslash, which would change the meaning of the nft string.
     */
    private static void interfaceName(String field, String s) {
        if (s.isEmpty() || s.length() > 15 || s.equals(".") || s.equals("..") || !s.matches("[^/\\s*\"\\\\:]+")) {
            throw new ConfigException(field, s, "an interface name: 1 to 15 characters, none of / : * \" \\ or whitespace"
                    + " (required by detectLocalMode " + (field.endsWith("Prefix") ? INTERFACE_NAME_PREFIX : BRIDGE_INTERFACE) + ")");
        }
    }
}
