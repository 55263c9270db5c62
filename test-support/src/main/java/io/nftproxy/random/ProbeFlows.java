package io.nftproxy.random;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;
import io.nftproxy.service.Endpoint;
import io.nftproxy.service.NodeContext;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ServicePort;
import io.nftproxy.trace.Origin;
import io.nftproxy.trace.Packet;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The first packets worth tracing through a table rendered for a cluster, the one enumeration both differentials
 * use (layouts against each other in process, nftproxy against kube-proxy in the kernel). For every service port
 * of the validated state, to every address it is reachable on (its ClusterIP, its NodePort on every local address
 * and on loopback, its externalIPs and load-balancer IPs): from a pod of this node, a pod of another node, an
 * off-node client, a LAN neighbour and the node itself; hairpin (the first endpoints and the first local one
 * calling their own Service); from inside each loadBalancerSourceRange and from outside them all. Then what no
 * Service defines: the next port up and the other protocol on each ClusterIP, and an address of the service
 * range no Service holds. Sources are the test address plan's (TestAddresses, which {@link ClusterGenerator}
 * follows): a local pod is inside this node's pod CIDR and the cluster CIDR, so each detect-local mode sees it.
 */
public final class ProbeFlows {
    /** Hairpin flows per destination: the first endpoints are enough to see per-endpoint masquerade. */
    private static final int HAIRPIN_ENDPOINTS = 2;

    private ProbeFlows() {}

    /** The flows of every service port of {@code state}, each once, in service-port order. */
    public static List<Packet> of(ProxyState state, NodeContext node) {
        IpFamily f = state.family();
        boolean v4 = f == IpFamily.IPV4;
        IpAddress pod = ip(v4 ? "10.0.1.250" : "fd00:10::1:fa");
        IpAddress remotePod = ip(v4 ? "10.0.2.250" : "fd00:10::2:fa");
        IpAddress allowed = ip(v4 ? ClusterGenerator.ALLOWED_CLIENT4 : ClusterGenerator.ALLOWED_CLIENT6);
        IpAddress denied = ip(v4 ? ClusterGenerator.DENIED_CLIENT4 : ClusterGenerator.DENIED_CLIENT6);
        IpAddress lan = ip(v4 ? "192.168.10.50" : "fd00:192:168:10::50");
        List<IpAddress> nodeIPs = node.nodeIPs(f);
        IpAddress host = nodeIPs.isEmpty() ? null : nodeIPs.get(0);
        List<IpAddress> local = new ArrayList<>(node.localAddresses().stream().filter(a -> a.family() == f).distinct().toList());
        if (local.isEmpty()) local.addAll(nodeIPs);
        local.add(ip(v4 ? "127.0.0.1" : "::1"));
        Set<String> servicePorts = new LinkedHashSet<>();
        state.servicePorts().values().forEach(sp -> servicePorts.add(sp.clusterIP() + " " + sp.protocol() + " " + sp.port()));

        Set<Packet> out = new LinkedHashSet<>();
        for (ServicePort sp : state.servicePorts().values()) {
            List<Dest> dests = new ArrayList<>();
            if (sp.clusterIP() != null) dests.add(new Dest(sp.clusterIP(), sp.port()));
            if (sp.nodePort() != 0) local.forEach(a -> dests.add(new Dest(a, sp.nodePort())));
            sp.externalIPs().forEach(a -> dests.add(new Dest(a, sp.port())));
            sp.loadBalancerIPs().forEach(a -> dests.add(new Dest(a, sp.port())));
            List<Endpoint> endpoints = state.endpointsOf(sp.name());
            List<IpAddress> hairpin = new ArrayList<>(endpoints.stream().limit(HAIRPIN_ENDPOINTS).map(Endpoint::ip).toList());
            endpoints.stream().filter(Endpoint::local).findFirst().ifPresent(e -> hairpin.add(e.ip()));
            boolean ranges = !sp.loadBalancerSourceRanges().isEmpty();
            for (Dest d : dests) {
                add(out, pod, d, sp, Origin.POD);
                add(out, remotePod, d, sp, Origin.EXTERNAL);
                add(out, allowed, d, sp, Origin.EXTERNAL);
                add(out, lan, d, sp, Origin.EXTERNAL);
                if (host != null) add(out, host, d, sp, Origin.HOST);
                hairpin.forEach(e -> add(out, e, d, sp, Origin.POD));
                for (IpPrefix range : sp.loadBalancerSourceRanges()) add(out, inside(range), d, sp, Origin.EXTERNAL);
                if (ranges || sp.loadBalancerIPs().contains(d.ip)) add(out, denied, d, sp, Origin.EXTERNAL);
            }
        }
        for (ServicePort sp : state.servicePorts().values()) {
            IpAddress cip = sp.clusterIP();
            if (cip == null) continue;
            int unused = sp.port() == 65535 ? 1 : sp.port() + 1;
            if (!servicePorts.contains(cip + " " + sp.protocol() + " " + unused)) {
                out.add(new Packet(pod, cip, sp.protocol(), unused, Origin.POD));
            }
            Protocol other = sp.protocol() == Protocol.UDP ? Protocol.TCP : Protocol.UDP;
            if (!servicePorts.contains(cip + " " + other + " " + sp.port())) out.add(new Packet(pod, cip, other, sp.port(), Origin.POD));
        }
        IpAddress unallocated = ip(v4 ? "172.30.255.254" : "fd00:172:30::f:fffe");
        out.add(new Packet(pod, unallocated, Protocol.TCP, 80, Origin.POD));
        out.add(new Packet(allowed, unallocated, Protocol.TCP, 80, Origin.EXTERNAL));
        return List.copyOf(out);
    }

    /** An address inside {@code range}: the one after its network address (the address itself for a host range). */
    static IpAddress inside(IpPrefix range) {
        if (range.isHost()) return range.address();
        byte[] b = range.address().bytes();
        b[b.length - 1]++;
        return IpAddress.of(b);
    }

    private static void add(Set<Packet> out, IpAddress src, Dest d, ServicePort sp, Origin origin) {
        out.add(new Packet(src, d.ip, sp.protocol(), d.port, origin));
    }

    private static IpAddress ip(String s) { return IpAddress.parse(s); }

    private record Dest(IpAddress ip, int port) {}
}
