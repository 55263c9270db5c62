package io.nftproxy.conntrack;

import io.nftproxy.proxy.Endpoint;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.Protocol;
import io.nftproxy.proxy.ProxyState;
import io.nftproxy.proxy.ServicePort;

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
 *       reply source is not one of that service port's <em>serving</em> endpoint IPs; or</li>
 *   <li>its original destination port is a UDP NodePort (on any destination address, as upstream) and its reply
 *       source is not one of that service port's serving endpoint IPs.</li>
 * </ul>
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
 * NodePort, to the serving endpoint IPs a flow to it may be answered by.
 */
public record StaleFlowFilter(IpFamily family, Map<AddressPort, Set<IpAddress>> servingByServiceAddress,
                              Map<Integer, Set<IpAddress>> servingByNodePort) {

    /** A UDP service address and port. */
    public record AddressPort(IpAddress address, int port) {
        public AddressPort {
            Objects.requireNonNull(address, "address");
        }

        @Override public String toString() { return address.withPort(port); }
    }

    /** The maps of one family's UDP service ports (all of them, or one Service's) to their serving endpoint IPs. */
    public static StaleFlowFilter of(ProxyState state) {
        Map<AddressPort, Set<IpAddress>> byAddress = new HashMap<>();
        Map<Integer, Set<IpAddress>> byNodePort = new HashMap<>();
        for (ServicePort sp : state.servicePorts().values()) {
            if (sp.protocol() != Protocol.UDP) continue;
            Set<IpAddress> serving = state.endpointsOf(sp.name()).stream().filter(Endpoint::serving).map(Endpoint::ip)
                    .collect(Collectors.toSet());
            addAll(byAddress, new AddressPort(sp.clusterIP(), sp.port()), serving);
            for (IpAddress ip : sp.externalIPs()) addAll(byAddress, new AddressPort(ip, sp.port()), serving);
            for (IpAddress ip : sp.loadBalancerIPs()) addAll(byAddress, new AddressPort(ip, sp.port()), serving);
            if (sp.nodePort() != 0) byNodePort.computeIfAbsent(sp.nodePort(), k -> new HashSet<>()).addAll(serving);
        }
        return new StaleFlowFilter(state.family(), freeze(byAddress), freeze(byNodePort));
    }

    private static void addAll(Map<AddressPort, Set<IpAddress>> m, AddressPort key, Set<IpAddress> ips) {
        // A headless or unallocated ClusterIP is rendered as no address at all; unspecified never matches a flow.
        if (key.address().isUnspecified()) return;
        m.computeIfAbsent(key, k -> new HashSet<>()).addAll(ips);
    }

    private static <K> Map<K, Set<IpAddress>> freeze(Map<K, Set<IpAddress>> m) {
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
        Set<IpAddress> serving = servingByServiceAddress.get(new AddressPort(flow.origDst(), flow.origDstPort()));
        // A flow to a service address is judged by that service alone, even if its port number is also some
        // NodePort: upstream's port-only NodePort filter would cut such a healthy flow.
        if (serving != null) return !serving.contains(flow.replySrc());
        Set<IpAddress> nodePortServing = servingByNodePort.get(flow.origDstPort());
        return nodePortServing != null && !nodePortServing.contains(flow.replySrc());
    }
}
