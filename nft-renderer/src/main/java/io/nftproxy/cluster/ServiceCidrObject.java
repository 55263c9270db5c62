package io.nftproxy.cluster;

import java.util.List;

/** A networking.k8s.io/v1 ServiceCIDR: the ranges ClusterIPs are allocated from. */
public record ServiceCidrObject(ObjectMeta meta, List<String> cidrs) {
    public ServiceCidrObject {
        cidrs = ServiceObject.copy(cidrs);
    }
}
