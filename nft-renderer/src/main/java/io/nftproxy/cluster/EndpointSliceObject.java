package io.nftproxy.cluster;

import java.util.List;

/** A discovery.k8s.io/v1 EndpointSlice as delivered: untrusted. Conditions are null when the API left them unset. */
public record EndpointSliceObject(ObjectMeta meta, String addressType, List<PortSpec> ports, List<Endpoint> endpoints) {
    public static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";
    public static final String TRIGGER_TIME_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time";

    public EndpointSliceObject {
        ports = ServiceObject.copy(ports);
        endpoints = ServiceObject.copy(endpoints);
    }

    public String serviceName() { return meta.labels().get(SERVICE_NAME_LABEL); }

    public record PortSpec(String name, String protocol, Integer port) {}

    public record Endpoint(List<String> addresses, Boolean ready, Boolean serving, Boolean terminating,
                           String nodeName, String zone, List<String> zoneHints, List<String> nodeHints) {
        public Endpoint {
            addresses = ServiceObject.copy(addresses);
            zoneHints = ServiceObject.copy(zoneHints);
            nodeHints = ServiceObject.copy(nodeHints);
        }
    }
}
