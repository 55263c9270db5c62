package io.nftproxy.conntrack;

import io.nftproxy.service.ServicePortName;

import java.util.Objects;

/** A conntrack flow that belongs to a service port, with the kind of service address it was sent to. */
public record ServiceFlow(ServicePortName service, Via via, FlowEntry flow) {
    /** Which address of the service the client used. */
    public enum Via { CLUSTER_IP, EXTERNAL_IP, LOAD_BALANCER_IP, NODE_PORT }

    public ServiceFlow {
        Objects.requireNonNull(service, "service");
        Objects.requireNonNull(via, "via");
        Objects.requireNonNull(flow, "flow");
    }
}
