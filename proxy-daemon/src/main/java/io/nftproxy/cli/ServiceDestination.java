package io.nftproxy.cli;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ServicePort;
import io.nftproxy.render.Renderer;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code trace --service NAMESPACE/NAME[:PORT] --via ...}: the packet's destination taken from a Service as the
 * renderer kept it (after validation), so an operator can trace by name: its ClusterIP (the default), its NodePort
 * on this node's IP, its first externalIP or its first load-balancer IP, with the port's protocol and number.
 */
record ServiceDestination(ServicePort port, IpAddress dst, int dport, String line) {
    /** Which of the Service's addresses the packet is sent to. */
    enum Via {
        CLUSTER_IP, NODE_PORT, EXTERNAL_IP, LOAD_BALANCER;

        String cliName() { return name().toLowerCase(Locale.ROOT).replace('_', '-'); }

        static Via parse(String s) {
            for (Via v : values()) if (v.cliName().equals(s.strip().toLowerCase(Locale.ROOT))) return v;
            return null;
        }
    }

    /** A Service named on the command line that cannot be a destination; the message says why and what to give. */
    static final class Unusable extends Exception {
        Unusable(String message) { super(message); }
    }

    /**
     * @param spec   {@code ns/name} or {@code ns/name:port}, the port by name or number
     * @param family the family of {@code --src} when given, else null (IPv4 first, then IPv6)
     */
    static ServiceDestination pick(String spec, Via via, IpFamily family, Renderer.Rendering rendering, NodeContext node)
            throws Unusable {
        int slash = spec.indexOf('/');
        int colon = spec.indexOf(':');
        if (slash <= 0 || slash == spec.length() - 1 || colon == slash + 1 || colon == spec.length() - 1) {
            throw new Unusable("--service " + spec + " is not NAMESPACE/NAME or NAMESPACE/NAME:PORT (PORT a port name or number)");
        }
        String ns = spec.substring(0, slash);
        String name = colon < 0 ? spec.substring(slash + 1) : spec.substring(slash + 1, colon);
        String wanted = colon < 0 ? null : spec.substring(colon + 1);
        List<IpFamily> families = family != null ? List.of(family) : List.of(IpFamily.IPV4, IpFamily.IPV6);
        List<ServicePort> all = new ArrayList<>();
        for (IpFamily f : families) {
            ProxyState state = rendering.state(f);
            for (ServicePort sp : state.servicePorts().values()) {
                if (sp.name().namespace().equals(ns) && sp.name().name().equals(name)) all.add(sp);
            }
        }
        String where = family == null ? "" : " of family " + family.nftFamily();
        if (all.isEmpty()) {
            throw new Unusable("no Service " + ns + "/" + name + where + " among the objects read (or it was skipped: see "
                    + "the warnings above)");
        }
        List<ServicePort> ports = wanted == null ? all : all.stream()
                .filter(sp -> sp.name().port().equals(wanted) || String.valueOf(sp.port()).equals(wanted)).toList();
        List<String> choices = all.stream().filter(sp -> sp.family() == all.get(0).family()).map(ServiceDestination::describe).toList();
        if (ports.isEmpty()) {
            throw new Unusable("Service " + ns + "/" + name + " has no port " + wanted + " (its ports: " + String.join(", ", choices) + ")");
        }
        ServicePort sp = ports.get(0);
        if (ports.stream().filter(p -> p.family() == sp.family()).count() > 1) {
            throw new Unusable("Service " + ns + "/" + name + " has " + choices.size() + " ports (" + String.join(", ", choices)
                    + "): give one, as --service " + ns + "/" + name + ":PORT");
        }
        String who = sp.name().elementComment().replace(":", " port ");
        IpAddress dst;
        int dport = sp.port();
        String what;
        switch (via) {
            case CLUSTER_IP -> {
                dst = sp.clusterIP();
                what = "ClusterIP";
            }
            case NODE_PORT -> {
                if (sp.nodePort() == 0) throw new Unusable(who + " has no NodePort");
                List<IpAddress> ips = node.nodeIPs(sp.family());
                if (ips.isEmpty()) {
                    throw new Unusable("node " + node.nodeName() + " has no " + sp.family().nftFamily() + " address to send "
                            + "its NodePort to: give --node-ip, or --dst and --dport");
                }
                dst = ips.get(0);
                dport = sp.nodePort();
                what = "NodePort on node address";
            }
            case EXTERNAL_IP -> {
                if (sp.externalIPs().isEmpty()) throw new Unusable(who + " has no externalIPs");
                dst = sp.externalIPs().get(0);
                what = "externalIP";
            }
            default -> {
                if (sp.loadBalancerIPs().isEmpty()) throw new Unusable(who + " has no load-balancer IP");
                dst = sp.loadBalancerIPs().get(0);
                what = "load-balancer IP";
            }
        }
        return new ServiceDestination(sp, dst, dport, "destination: " + who + ", " + what + " " + dst + " "
                + sp.protocol().nftName() + " " + dport + " (from --service, --via " + via.cliName() + ")");
    }

    /** {@code http (tcp 80)}, or {@code (tcp 80)} for an unnamed port. */
    private static String describe(ServicePort sp) {
        return (sp.name().port().isEmpty() ? "" : sp.name().port() + " ") + "(" + sp.protocol().nftName() + " " + sp.port() + ")";
    }
}
