package io.nftproxy.conntrack;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.Protocol;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ServicePort;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Finds the service port a flow was addressed to, for every protocol: by (protocol, destination address, port) for
 * ClusterIPs, externalIPs and LoadBalancer VIPs; by (protocol, destination port) for NodePorts, but only for flows
 * that were DNATed, since the node's own outgoing flows to some remote port 3xxxx are not ours. Pure.
 */
public final class ServiceFlowIndex {
    private record Key(int protocol, IpAddress address, int port) {}

    private record Target(ServicePort port, ServiceFlow.Via via) {}

    private final Map<Key, Target> byAddress = new HashMap<>();
    private final Map<Key, Target> byNodePort = new HashMap<>();

    private ServiceFlowIndex() {}

    /** An index over the given families' states; null states are skipped. */
    public static ServiceFlowIndex of(ProxyState... states) {
        ServiceFlowIndex idx = new ServiceFlowIndex();
        for (ProxyState s : states) {
            if (s == null) continue;
            for (ServicePort sp : s.servicePorts().values()) idx.add(sp);
        }
        return idx;
    }

    private void add(ServicePort sp) {
        int proto = number(sp.protocol());
        byAddress.putIfAbsent(new Key(proto, sp.clusterIP(), sp.port()), new Target(sp, ServiceFlow.Via.CLUSTER_IP));
        for (IpAddress ip : sp.externalIPs()) {
            byAddress.putIfAbsent(new Key(proto, ip, sp.port()), new Target(sp, ServiceFlow.Via.EXTERNAL_IP));
        }
        for (IpAddress ip : sp.loadBalancerIPs()) {
            byAddress.putIfAbsent(new Key(proto, ip, sp.port()), new Target(sp, ServiceFlow.Via.LOAD_BALANCER_IP));
        }
        if (sp.nodePort() != 0) {
            // NodePorts are per family in the table, but the port space is shared: key without an address.
            byNodePort.putIfAbsent(new Key(proto, null, sp.nodePort()), new Target(sp, ServiceFlow.Via.NODE_PORT));
        }
    }

    static int number(Protocol p) {
        return switch (p) {
            case TCP -> FlowEntry.TCP;
            case UDP -> FlowEntry.UDP;
            case SCTP -> FlowEntry.SCTP;
        };
    }

    /** The service port the flow belongs to, if any. */
    public Optional<ServiceFlow> match(FlowEntry flow) {
        Target t = byAddress.get(new Key(flow.protocol(), flow.origDst(), flow.origDstPort()));
        if (t == null && flow.isDnat()) t = byNodePort.get(new Key(flow.protocol(), null, flow.origDstPort()));
        if (t == null || t.port().family() != flow.family()) return Optional.empty();
        return Optional.of(new ServiceFlow(t.port().name(), t.via(), flow));
    }
}
