package io.nftproxy.random;

import io.nftproxy.TestAddresses;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.LocalTraffic;
import io.nftproxy.service.NodeContext;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The node a random cluster is rendered for, as an operator would configure both proxies: its Node object (name,
 * zone, addresses, pod CIDRs) and the proxy settings that change the table (cluster CIDRs, nodePortAddresses,
 * masqueradeAll, detect-local mode). {@link #context()} is what {@code NodeResolver} makes of them when nothing
 * but the Node object says what the node's addresses are, which is also what {@code nftproxy render --manifests}
 * does with {@link #renderArgs()} and the manifests {@link ManifestYaml} writes. The differential harness against
 * kube-proxy runs both proxies as this node: {@link #interfaceAddresses()} on an interface of each proxy's
 * namespace and {@link #configFile} as the configuration file both read.
 *
 * @param families           the node's families, primary first
 * @param internalIPs        the Node object's InternalIP addresses, one per family, primary first
 * @param externalIPs        the Node object's ExternalIP addresses (a second local address; empty for most nodes)
 * @param podCidrs           spec.podCIDRs, primary first
 * @param clusterCidrs       --cluster-cidr; may be empty (then ClusterCIDR mode detects nothing)
 * @param nodePortAddresses  --nodeport-addresses: empty for kube-proxy's default, {@code primary}
 * @param detectLocalMode    ClusterCIDR, NodeCIDR, BridgeInterface or InterfaceNamePrefix
 * @param detectLocalName    the bridge or the interface name prefix for the interface modes, else ""
 */
public record NodeSettings(String nodeName, String zone, List<IpFamily> families, List<String> internalIPs,
                           List<String> externalIPs, List<String> podCidrs, List<String> clusterCidrs,
                           List<String> nodePortAddresses, boolean masqueradeAll, String detectLocalMode,
                           String detectLocalName) {
    public static final String CLUSTER_CIDR = "ClusterCIDR";
    public static final String NODE_CIDR = "NodeCIDR";
    public static final String BRIDGE_INTERFACE = "BridgeInterface";
    public static final String INTERFACE_NAME_PREFIX = "InterfaceNamePrefix";

    public NodeSettings {
        families = List.copyOf(families);
        internalIPs = List.copyOf(internalIPs);
        externalIPs = List.copyOf(externalIPs);
        podCidrs = List.copyOf(podCidrs);
        clusterCidrs = List.copyOf(clusterCidrs);
        nodePortAddresses = List.copyOf(nodePortAddresses);
    }

    /** This node's Node object, as the API server would hold it. */
    public NodeObject nodeObject() {
        List<NodeObject.Address> addresses = new ArrayList<>();
        internalIPs.forEach(a -> addresses.add(new NodeObject.Address("InternalIP", a)));
        externalIPs.forEach(a -> addresses.add(new NodeObject.Address("ExternalIP", a)));
        addresses.add(new NodeObject.Address("Hostname", nodeName));
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("kubernetes.io/hostname", nodeName);
        labels.put(NodeObject.ZONE_LABEL, zone);
        return new NodeObject(new ObjectMeta(null, nodeName, labels, Map.of(), false), addresses, List.of(), podCidrs);
    }

    /** The renderer's node: as NodeResolver resolves these settings with this Node object and no interface list. */
    public NodeContext context() {
        List<IpAddress> ips = new ArrayList<>();
        internalIPs.forEach(a -> ips.add(IpAddress.parse(a)));
        externalIPs.forEach(a -> ips.add(IpAddress.parse(a)));
        List<IpPrefix> npa = new ArrayList<>();
        if (nodePortAddresses.isEmpty() || nodePortAddresses.contains("primary")) {
            for (IpFamily f : IpFamily.values()) {
                ips.stream().filter(a -> a.family() == f).findFirst().ifPresent(a -> npa.add(IpPrefix.host(a)));
            }
        } else {
            nodePortAddresses.forEach(c -> npa.add(IpPrefix.parse(c)));
        }
        List<IpPrefix> cluster = clusterCidrs.stream().map(IpPrefix::parse).toList();
        LocalTraffic local = switch (detectLocalMode) {
            case NODE_CIDR -> LocalTraffic.bySource(podCidrs.stream().map(IpPrefix::parse).toList());
            case BRIDGE_INTERFACE -> LocalTraffic.byInterface(detectLocalName, false);
            case INTERFACE_NAME_PREFIX -> LocalTraffic.byInterface(detectLocalName, true);
            default -> LocalTraffic.bySource(cluster);
        };
        return new NodeContext(nodeName, zone, ips, cluster, npa, ips, masqueradeAll,
                NodeContext.DEFAULT_MASQUERADE_BIT, true, local);
    }

    /**
     * The flags that make {@code nftproxy render} (and {@code run}) see this node, given the manifests
     * {@link ManifestYaml} writes (which hold the Node object). kube-proxy takes the same spellings.
     */
    public List<String> renderArgs() {
        List<String> args = new ArrayList<>(List.of("--hostname-override", nodeName));
        if (!clusterCidrs.isEmpty()) args.addAll(List.of("--cluster-cidr", String.join(",", clusterCidrs)));
        if (!nodePortAddresses.isEmpty()) args.addAll(List.of("--nodeport-addresses", String.join(",", nodePortAddresses)));
        if (masqueradeAll) args.add("--masquerade-all");
        args.addAll(List.of("--detect-local-mode", detectLocalMode));
        if (detectLocalMode.equals(BRIDGE_INTERFACE)) args.addAll(List.of("--pod-bridge-interface", detectLocalName));
        if (detectLocalMode.equals(INTERFACE_NAME_PREFIX)) args.addAll(List.of("--pod-interface-name-prefix", detectLocalName));
        return args;
    }

    /**
     * The node with the test address plan's (TestAddresses) node-a: dual-stack, its pod and cluster CIDRs, its zone,
     * kube-proxy's defaults otherwise.
     */
    public static NodeSettings dualStackNode() {
        return new NodeSettings(TestAddresses.NODE, TestAddresses.ZONE, List.of(IpFamily.IPV4, IpFamily.IPV6),
                List.of(TestAddresses.NODE_IP, TestAddresses.NODE_IP6), List.of(),
                List.of(TestAddresses.POD_CIDR, TestAddresses.POD_CIDR6),
                List.of(TestAddresses.CLUSTER_CIDR, TestAddresses.CLUSTER_CIDR6), List.of(), false, CLUSTER_CIDR, "");
    }

    /** The node's own addresses (InternalIPs, then ExternalIPs): what is local on the node. */
    public List<String> hostAddresses() {
        List<String> out = new ArrayList<>(internalIPs);
        out.addAll(externalIPs);
        return out;
    }

    /**
     * {@link #hostAddresses()} with the LAN's prefix length ({@code 192.168.10.20/24}, {@code fd00:…::20/64}), to
     * put on a namespace's interface.
     */
    public List<String> interfaceAddresses() {
        return hostAddresses().stream().map(a -> a + "/" + (IpAddress.parse(a).family() == IpFamily.IPV4
                ? TestAddresses.LAN_PREFIX_LENGTH : TestAddresses.LAN6_PREFIX_LENGTH)).toList();
    }

    /**
     * These settings as one KubeProxyConfiguration file, which kube-proxy and nftproxy each read ({@code --config}),
     * so a setting cannot reach one proxy and miss the other. Conntrack sizing and timeouts are zero (leave the
     * kernel's alone): nf_conntrack_max is not per namespace, and no test may change the host's settings.
     */
    public String configFile(Path kubeconfig, int healthzPort, int metricsPort) {
        List<String> y = new ArrayList<>(List.of(
                "apiVersion: kubeproxy.config.k8s.io/v1alpha1",
                "kind: KubeProxyConfiguration",
                "mode: nftables",
                "hostnameOverride: " + nodeName,
                "clientConnection:",
                "  kubeconfig: " + kubeconfig,
                "clusterCIDR: \"" + String.join(",", clusterCidrs) + "\"",
                "detectLocalMode: " + detectLocalMode,
                "detectLocal:",
                "  bridgeInterface: \"" + (detectLocalMode.equals(BRIDGE_INTERFACE) ? detectLocalName : "") + "\"",
                "  interfaceNamePrefix: \"" + (detectLocalMode.equals(INTERFACE_NAME_PREFIX) ? detectLocalName : "") + "\"",
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

    /** The setting of this node's address of {@code f} (the first InternalIP of the family), or null. */
    public String nodeIP(IpFamily f) {
        return internalIPs.stream().filter(a -> IpAddress.parse(a).family() == f).findFirst().orElse(null);
    }

    /** The same node with kube-proxy's default settings: what a shrinker tries first. */
    public NodeSettings withDefaults() {
        return new NodeSettings(nodeName, zone, families, internalIPs, List.of(), podCidrs, clusterCidrs, List.of(),
                false, CLUSTER_CIDR, "");
    }

    public NodeSettings withMasqueradeAll(boolean on) {
        return new NodeSettings(nodeName, zone, families, internalIPs, externalIPs, podCidrs, clusterCidrs,
                nodePortAddresses, on, detectLocalMode, detectLocalName);
    }

    public NodeSettings withDetectLocal(String mode, String name) {
        return new NodeSettings(nodeName, zone, families, internalIPs, externalIPs, podCidrs, clusterCidrs,
                nodePortAddresses, masqueradeAll, mode, name);
    }

    public NodeSettings withNodePortAddresses(List<String> cidrs, List<String> extraAddresses) {
        return new NodeSettings(nodeName, zone, families, internalIPs, extraAddresses, podCidrs, clusterCidrs, cidrs,
                masqueradeAll, detectLocalMode, detectLocalName);
    }

    /** One line for reports: {@code node-a (IPv4,IPv6) nodePortAddresses=… masqueradeAll … detectLocal=…}. */
    public String summary() {
        return nodeName + " " + families.stream().map(IpFamily::apiName).toList() + " ips=" + internalIPs
                + (externalIPs.isEmpty() ? "" : "+" + externalIPs) + " clusterCIDRs=" + clusterCidrs
                + " nodePortAddresses=" + (nodePortAddresses.isEmpty() ? "(default)" : nodePortAddresses)
                + (masqueradeAll ? " masqueradeAll" : "") + " detectLocal=" + detectLocalMode
                + (detectLocalName.isEmpty() ? "" : ":" + detectLocalName);
    }
}
