package io.nftproxy.random;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
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
 * The first packets worth tracing through a table rendered for a cluster: for every service port of the validated
 * state, its ClusterIP from a local pod, a remote node's pod, an off-node client and the node itself, a port of the
 * ClusterIP no service uses, a local endpoint calling its own Service (hairpin), its NodePort on every local address
 * and on loopback, its externalIPs, and its load-balancer IPs from inside and outside the source ranges and from
 * the LAN. Sources are {@link ClusterGenerator}'s address plan.
 */
public final class ProbeFlows {
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
        local.add(ip(v4 ? "127.0.0.1" : "::1"));
        Set<String> servicePorts = new LinkedHashSet<>();
        state.servicePorts().values().forEach(sp -> servicePorts.add(sp.clusterIP() + " " + sp.protocol() + " " + sp.port()));

        Set<Packet> out = new LinkedHashSet<>();
        for (ServicePort sp : state.servicePorts().values()) {
            var proto = sp.protocol();
            IpAddress cip = sp.clusterIP();
            add(out, pod, cip, sp, sp.port(), Origin.POD);
            add(out, remotePod, cip, sp, sp.port(), Origin.EXTERNAL);
            add(out, allowed, cip, sp, sp.port(), Origin.EXTERNAL);
            if (host != null) add(out, host, cip, sp, sp.port(), Origin.HOST);
            int unused = sp.port() == 65535 ? 1 : sp.port() + 1;
            if (!servicePorts.contains(cip + " " + proto + " " + unused)) add(out, pod, cip, sp, unused, Origin.POD);
            for (Endpoint e : state.endpointsOf(sp.name())) {
                if (e.local()) {
                    add(out, e.ip(), cip, sp, sp.port(), Origin.POD);
                    break;
                }
            }
            if (sp.nodePort() != 0) {
                for (IpAddress a : local) {
                    add(out, allowed, a, sp, sp.nodePort(), Origin.EXTERNAL);
                    add(out, pod, a, sp, sp.nodePort(), Origin.POD);
                    if (host != null) add(out, host, a, sp, sp.nodePort(), Origin.HOST);
                }
            }
            for (IpAddress ext : sp.externalIPs()) {
                add(out, allowed, ext, sp, sp.port(), Origin.EXTERNAL);
                add(out, pod, ext, sp, sp.port(), Origin.POD);
                if (host != null) add(out, host, ext, sp, sp.port(), Origin.HOST);
            }
            for (IpAddress vip : sp.loadBalancerIPs()) {
                add(out, allowed, vip, sp, sp.port(), Origin.EXTERNAL);
                add(out, denied, vip, sp, sp.port(), Origin.EXTERNAL);
                add(out, lan, vip, sp, sp.port(), Origin.EXTERNAL);
                add(out, pod, vip, sp, sp.port(), Origin.POD);
                if (host != null) add(out, host, vip, sp, sp.port(), Origin.HOST);
            }
        }
        return List.copyOf(out);
    }

    private static void add(Set<Packet> out, IpAddress src, IpAddress dst, ServicePort sp, int port, Origin origin) {
        out.add(new Packet(src, dst, sp.protocol(), port, origin));
    }

    private static IpAddress ip(String s) { return IpAddress.parse(s); }
}
