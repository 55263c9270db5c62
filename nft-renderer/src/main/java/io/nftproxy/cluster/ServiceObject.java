package io.nftproxy.cluster;

import java.util.List;

/**
 * A v1 Service as the API delivered it: every string still untrusted. {@code sessionAffinityTimeoutSeconds} is
 * null when the API object carried no {@code sessionAffinityConfig}.
 */
public record ServiceObject(ObjectMeta meta, String type, String clusterIP, List<String> clusterIPs,
                            List<String> ipFamilies, List<PortSpec> ports, List<String> externalIPs,
                            List<LoadBalancerIngress> loadBalancerIngress, List<String> loadBalancerSourceRanges,
                            String sessionAffinity, Integer sessionAffinityTimeoutSeconds,
                            String externalTrafficPolicy, String internalTrafficPolicy, Integer healthCheckNodePort,
                            String trafficDistribution) {
    public ServiceObject {
        clusterIPs = copy(clusterIPs);
        ipFamilies = copy(ipFamilies);
        ports = copy(ports);
        externalIPs = copy(externalIPs);
        loadBalancerIngress = copy(loadBalancerIngress);
        loadBalancerSourceRanges = copy(loadBalancerSourceRanges);
    }

    /** One entry of {@code spec.ports}. {@code targetPort} is kept for display only: slices carry the real port. */
    public record PortSpec(String name, String protocol, Integer port, String targetPort, Integer nodePort) {}

    /** One entry of {@code status.loadBalancer.ingress}. */
    public record LoadBalancerIngress(String ip, String hostname, String ipMode) {}

    static <T> List<T> copy(List<T> l) {
        return l == null ? List.of() : List.copyOf(l.stream().filter(x -> x != null).toList());
    }
}
