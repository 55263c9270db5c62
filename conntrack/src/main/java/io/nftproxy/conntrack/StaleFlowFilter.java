package io.nftproxy.conntrack;

import io.nftproxy.service.Endpoint;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.Protocol;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ServicePort;

import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Decides which UDP conntrack entries of one family outlived their endpoint, as kube-proxy's conntrack reconciler
 * does after a successful sync (reference: kube-proxy-nftables.md 2.6). A UDP flow keeps its DNAT for as long as
 * packets keep coming (each refreshes the 30/120 s timeout), so a client with a fixed source port would talk to a
 * removed endpoint forever (kubernetes#19029, #125467); deleting the entry makes its next packet go through the
 * rules again.
 *
 * <p>A UDP entry is stale when
 * <ul>
 *   <li>its original destination is a UDP service address (ClusterIP, externalIP, LoadBalancer VIP) and port, and its
 *       reply source address and port is not one of that service port's <em>serving</em> endpoints; or</li>
 *   <li>its original destination port is a UDP NodePort (on any destination address, as upstream) and its reply
 *       source address and port is not one of that service port's serving endpoints.</li>
 * </ul>
 * The endpoint's port counts as upstream's reconciler counts it: after a Service's targetPort changes, the pod is
 * still serving but its old port is not, and a flow still DNATed to the old port must go (upstream's e2e test
 * "cleanup conntrack entries when UDP service target port changes for a NodePort service", which failed here on two
 * nodes while the filter compared addresses only).
 * Readiness, terminating state, topology and traffic policies are ignored (a serving endpoint may still be in use).
 * A service port with no serving endpoints has an empty set, so all its flows go: leaving them was #139628 (a 13 h
 * blackhole). Flows created while a service had no endpoints were never DNATed, their reply source is the service
 * address itself, which is never an endpoint: they go too (the "0 to N endpoints" case, #48370). TCP and SCTP are
 * never touched: their flows end by themselves and deleting them would break live connections.
 *
 * <p>Unlike upstream, which keys the service map by address only, this keys it by address and port: two UDP ports of
 * one service with different endpoint sets cannot shadow each other, and a flow that matched a service address is
 * not judged again as a NodePort flow.
 *
 * <p>{@code servingByServiceAddress} maps each UDP service address and port, {@code servingByNodePort} each UDP
 * NodePort, to the serving endpoints (address and port) a flow to it may be answered by.
 */
public record StaleFlowFilter(IpFamily family, Map<AddressPort, Set<AddressPort>> servingByServiceAddress,
                              Map<Integer, Set<AddressPort>> servingByNodePort) {

    /** A UDP service address and port, or a serving endpoint's. */
    public record AddressPort(IpAddress address, int port) {
        public AddressPort {
            Objects.requireNonNull(address, "address");
        }

        @Override public String toString() { return address.withPort(port); }
    }

    /** The maps of one family's UDP service ports (all of them, or one Service's) to their serving endpoint IPs. */
    public static StaleFlowFilter of(ProxyState state) {
        Map<AddressPort, Set<AddressPort>> byAddress = new HashMap<>();
        Map<Integer, Set<AddressPort>> byNodePort = new HashMap<>();
        for (ServicePort sp : state.servicePorts().values()) {
            if (sp.protocol() != Protocol.UDP) continue;
            Set<AddressPort> serving = state.endpointsOf(sp.name()).stream().filter(Endpoint::serving)
                    .map(e -> new AddressPort(e.ip(), e.port())).collect(Collectors.toSet());
            addAll(byAddress, new AddressPort(sp.clusterIP(), sp.port()), serving);
            for (IpAddress ip : sp.externalIPs()) addAll(byAddress, new AddressPort(ip, sp.port()), serving);
            for (IpAddress ip : sp.loadBalancerIPs()) addAll(byAddress, new AddressPort(ip, sp.port()), serving);
            if (sp.nodePort() != 0) byNodePort.computeIfAbsent(sp.nodePort(), k -> new HashSet<>()).addAll(serving);
        }
        return new StaleFlowFilter(state.family(), freeze(byAddress), freeze(byNodePort));
    }

    private static void addAll(Map<AddressPort, Set<AddressPort>> m, AddressPort key, Set<AddressPort> serving) {
        // A headless or unallocated ClusterIP is rendered as no address at all; unspecified never matches a flow.
        if (key.address().isUnspecified()) return;
        m.computeIfAbsent(key, k -> new HashSet<>()).addAll(serving);
    }

    private static <K> Map<K, Set<AddressPort>> freeze(Map<K, Set<AddressPort>> m) {
        m.replaceAll((k, v) -> Collections.unmodifiableSet(v));
        return Collections.unmodifiableMap(m);
    }

    /** Whether there is nothing to clean in this family: no UDP service ports at all. */
    public boolean isEmpty() { return servingByServiceAddress.isEmpty() && servingByNodePort.isEmpty(); }

    /**
     * Whether a cleanup is due after a sync that moved from {@code previous} (null: none yet, as at start) to this
     * state: upstream cleans only when some UDP service port's endpoints changed. A restart cleans once, which is
     * harmless here because only flows whose reply source is not serving are deleted (unlike the flush-everything
     * first sync of #122740).
     */
    public boolean changedSince(StaleFlowFilter previous) { return !equals(previous); }

    /** Whether the flow should be deleted. */
    public boolean isStale(FlowEntry flow) {
        if (flow.protocol() != FlowEntry.UDP || flow.family() != family) return false;
        AddressPort answeredBy = new AddressPort(flow.replySrc(), flow.replySrcPort());
        Set<AddressPort> serving = servingByServiceAddress.get(new AddressPort(flow.origDst(), flow.origDstPort()));
        // A flow to a service address is judged by that service alone, even if its port number is also some
        // NodePort: upstream's port-only NodePort filter would cut such a healthy flow.
        if (serving != null) return !serving.contains(answeredBy);
        Set<AddressPort> nodePortServing = servingByNodePort.get(flow.origDstPort());
        return nodePortServing != null && !nodePortServing.contains(answeredBy);
    }
}
