package io.nftproxy.service;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;

import java.util.List;

/**
 * One service port for one IP family, fully validated: every address parsed and of this family, every port in
 * range. {@code affinityTimeoutSeconds} is 0 without ClientIP affinity; {@code nodePort} and
 * {@code healthCheckNodePort} are 0 when unset.
 */
public record ServicePort(ServicePortName name, IpFamily family, IpAddress clusterIP, int port, int nodePort,
                          List<IpAddress> externalIPs, List<IpAddress> loadBalancerIPs,
                          List<IpPrefix> loadBalancerSourceRanges, int affinityTimeoutSeconds,
                          boolean internalLocal, boolean externalLocal, int healthCheckNodePort,
                          String targetPortDisplay) {
    public ServicePort {
        externalIPs = List.copyOf(externalIPs);
        loadBalancerIPs = List.copyOf(loadBalancerIPs);
        loadBalancerSourceRanges = List.copyOf(loadBalancerSourceRanges);
    }

    public Protocol protocol() { return name.protocol(); }

    public boolean hasAffinity() { return affinityTimeoutSeconds > 0; }

    /** NodePort, a LoadBalancer VIP, or an externalIP: reachable from outside the cluster network. */
    public boolean externallyAccessible() {
        return nodePort != 0 || !loadBalancerIPs.isEmpty() || !externalIPs.isEmpty();
    }

    public boolean usesClusterEndpoints() { return !internalLocal || externallyAccessible(); }

    public boolean usesLocalEndpoints() { return internalLocal || (externalLocal && externallyAccessible()); }

    /** The LoadBalancerSourceRanges firewall applies only to LB VIPs of this family with ranges of this family. */
    public boolean usesFirewall() { return !loadBalancerIPs.isEmpty() && !loadBalancerSourceRanges.isEmpty(); }
}
