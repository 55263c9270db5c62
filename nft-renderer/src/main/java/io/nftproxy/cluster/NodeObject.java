package io.nftproxy.cluster;

import java.util.List;

/** A v1 Node: its labels (topology zone), addresses, taints and whether it is being deleted. */
public record NodeObject(ObjectMeta meta, List<Address> addresses, List<String> taintKeys, List<String> podCIDRs) {
    public static final String ZONE_LABEL = "topology.kubernetes.io/zone";
    public static final String TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler";

    public NodeObject {
        addresses = ServiceObject.copy(addresses);
        taintKeys = ServiceObject.copy(taintKeys);
        podCIDRs = ServiceObject.copy(podCIDRs);
    }

    public record Address(String type, String address) {}

    public String zone() { return meta.labels().get(ZONE_LABEL); }
}
