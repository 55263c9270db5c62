package io.nftproxy.cli;

import io.nftproxy.config.LocalDetection;
import picocli.CommandLine.Option;

/**
 * kube-proxy's local-traffic detector flags, on every command that renders ({@code run}, {@code render},
 * {@code trace}), so that what an operator renders or traces is what the daemon programs with the same flags.
 */
final class LocalDetectorFlags {
    @Option(names = "--detect-local-mode", paramLabel = "MODE",
            description = {"How pod traffic is recognised: ClusterCIDR (source in --cluster-cidr), NodeCIDR (source in "
                    + "the Node object's spec.podCIDRs), BridgeInterface (enters on --pod-bridge-interface) or "
                    + "InterfaceNamePrefix (enters on an interface named --pod-interface-name-prefix*). Default: "
                    + "ClusterCIDR, or detectLocalMode from --config."})
    String detectLocalMode;

    @Option(names = "--pod-bridge-interface", paramLabel = "NAME",
            description = {"The bridge the node's pods are attached to, for --detect-local-mode=BridgeInterface."})
    String podBridgeInterface;

    @Option(names = "--pod-interface-name-prefix", paramLabel = "PREFIX",
            description = {"The name prefix of the pods' interfaces (such as veth), for --detect-local-mode=InterfaceNamePrefix."})
    String podInterfaceNamePrefix;

    /**
     * The flags given, over {@code base} (the file's, or the default); not yet validated.
     */
    LocalDetection over(LocalDetection base) {
        return new LocalDetection(detectLocalMode != null ? detectLocalMode : base.mode(),
                podBridgeInterface != null ? podBridgeInterface : base.bridgeInterface(),
                podInterfaceNamePrefix != null ? podInterfaceNamePrefix : base.interfaceNamePrefix());
    }
}
