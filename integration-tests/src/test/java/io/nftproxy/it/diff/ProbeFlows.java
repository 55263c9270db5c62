package io.nftproxy.it.diff;

import io.nftproxy.TestAddresses;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;
import io.nftproxy.service.Endpoint;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ProxyStateBuilder;
import io.nftproxy.service.ServicePort;
import io.nftproxy.trace.Origin;
import io.nftproxy.trace.Packet;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The first packets a differential run traces through both proxies' tables: for every service port of the family,
 * to every address it is reachable on (ClusterIP, each node address at the node port, each externalIP and
 * load-balancer VIP), from a pod of this node, from the node itself and from off the node; hairpin (an endpoint to
 * its own Service); from inside each loadBalancerSourceRange and from outside all of them; a port and a protocol the Service does
 * not have; and an address of the service range no Service holds. Sources come from the test address plan, so a
 * pod's source is inside the cluster CIDR and this node's pod CIDR (NodeCIDR detection).
 */
final class ProbeFlows {
    /** Hairpin flows per service port: the first endpoints are enough to see per-endpoint masquerade. */
    private static final int HAIRPIN_ENDPOINTS = 2;

    private ProbeFlows() {}

    static List<Packet> of(ClusterSnapshot cluster, IpFamily family, NodeSettings node) {
        boolean v4 = family == IpFamily.IPV4;
        IpAddress pod = IpAddress.parse(v4 ? TestAddresses.POD_CLIENT : TestAddresses.POD_CLIENT6);
        IpAddress external = IpAddress.parse(v4 ? TestAddresses.EXTERNAL_CLIENT : TestAddresses.EXTERNAL_CLIENT6);
        // Off the node and, in the corpus, outside every loadBalancerSourceRange (checked per Service below).
        IpAddress denied = IpAddress.parse(v4 ? TestAddresses.DENIED_CLIENT : "2001:db8:ffff:1::7");
        List<IpAddress> nodeIps = node.hostAddresses().stream().map(IpAddress::parse).filter(a -> a.family() == family).toList();
        IpAddress host = nodeIps.isEmpty() ? null : nodeIps.get(0);

        ProxyState state = ProxyStateBuilder.build(cluster, family, node.nodeName());
        Set<Packet> out = new LinkedHashSet<>();
        Set<String> used = new HashSet<>();
        for (ServicePort sp : state.servicePorts().values()) {
            used.add(sp.clusterIP() + " " + sp.protocol() + " " + sp.port());
            List<IpAddress> vipish = new ArrayList<>(sp.externalIPs());
            vipish.addAll(sp.loadBalancerIPs());
            List<Dest> dests = new ArrayList<>();
            if (sp.clusterIP() != null) dests.add(new Dest(sp.clusterIP(), sp.port()));
            if (sp.nodePort() != 0) nodeIps.forEach(ip -> dests.add(new Dest(ip, sp.nodePort())));
            vipish.forEach(ip -> dests.add(new Dest(ip, sp.port())));
            for (Dest d : dests) {
                out.add(new Packet(pod, d.ip, sp.protocol(), d.port, Origin.POD));
                out.add(new Packet(external, d.ip, sp.protocol(), d.port, Origin.EXTERNAL));
                if (host != null) out.add(new Packet(host, d.ip, sp.protocol(), d.port, Origin.HOST));
                for (Endpoint e : state.endpointsOf(sp.name()).stream().limit(HAIRPIN_ENDPOINTS).toList()) {
                    out.add(new Packet(e.ip(), d.ip, sp.protocol(), d.port, Origin.POD));
                }
                for (IpPrefix range : sp.loadBalancerSourceRanges()) {
                    out.add(new Packet(inside(range), d.ip, sp.protocol(), d.port, Origin.EXTERNAL));
                }
                if (!sp.loadBalancerSourceRanges().isEmpty() && sp.loadBalancerSourceRanges().stream().noneMatch(r -> r.contains(denied))) {
                    out.add(new Packet(denied, d.ip, sp.protocol(), d.port, Origin.EXTERNAL));
                }
            }
        }
        // What no Service defines: the next port up and another protocol on each ClusterIP, an unallocated address.
        for (ServicePort sp : state.servicePorts().values()) {
            if (sp.clusterIP() == null) continue;
            if (sp.port() < 65535 && !used.contains(sp.clusterIP() + " " + sp.protocol() + " " + (sp.port() + 1))) {
                out.add(new Packet(pod, sp.clusterIP(), sp.protocol(), sp.port() + 1, Origin.POD));
            }
            Protocol other = sp.protocol() == Protocol.UDP ? Protocol.TCP : Protocol.UDP;
            if (!used.contains(sp.clusterIP() + " " + other + " " + sp.port())) {
                out.add(new Packet(pod, sp.clusterIP(), other, sp.port(), Origin.POD));
            }
        }
        IpAddress unallocated = IpAddress.parse(v4 ? "172.30.255.254" : "fd00:172:30::f:fffe");
        out.add(new Packet(pod, unallocated, Protocol.TCP, 80, Origin.POD));
        out.add(new Packet(external, unallocated, Protocol.TCP, 80, Origin.EXTERNAL));
        return List.copyOf(out);
    }

    /** An address inside {@code range}: the one after its network address (the address itself for a host range). */
    static IpAddress inside(IpPrefix range) {
        if (range.isHost()) return range.address();
        byte[] b = range.address().bytes();
        b[b.length - 1]++;
        return IpAddress.of(b);
    }

    private record Dest(IpAddress ip, int port) {}
}
