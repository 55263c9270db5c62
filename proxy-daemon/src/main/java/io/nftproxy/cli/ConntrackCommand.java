package io.nftproxy.cli;

import io.nftproxy.config.LocalDetection;
import io.nftproxy.netlink.LibC;
import io.nftproxy.conntrack.ConntrackLister;
import io.nftproxy.conntrack.FlowEntry;
import io.nftproxy.conntrack.ServiceFlow;
import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.rt.NetlinkException;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.ServicePortName;
import io.nftproxy.render.Renderer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code nftproxy conntrack}: the kernel's conntrack flows that belong to services, one line each, for debugging
 * ("which pod did this client end up on, and is the flow still there?"). Which flows are ours comes from the same
 * manifests and node flags as {@code render}; the flows themselves from ctnetlink, read-only.
 */
@Command(name = "conntrack",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {"List the conntrack flows that belong to services: one line per flow with the service port, "
                + "protocol, original tuple (client -> service address), reply tuple (endpoint -> client), which kind "
                + "of service address the client used (ClusterIP, NodePort, externalIP, LoadBalancer) and the "
                + "flow's state. Which services there are comes from --manifests, or with --kubeconfig from the live "
                + "cluster (listed once). Read-only. Needs CAP_NET_ADMIN.",
                ""},
        footer = {"", "Example:",
                "  nftproxy conntrack --manifests examples --hostname-override k8s-node-1 \\",
                "      --service demo/hello",
                "", "Exit codes: 0 listed (also when no flow matches), 1 --manifests or the API server unreadable, 2 invalid flag, "
                + "4 permission denied, 5 the conntrack table could not be read."})
public final class ConntrackCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    NodeOptions nodeOptions;

    @Mixin
    LiveCluster liveCluster;

    @Option(names = "--service", paramLabel = "NS/NAME",
            description = {"Only the flows of this Service (every port of it).", "Example: --service demo/hello"})
    String service;

    /** For tests and tools: read the conntrack table of {@code /run/netns/NAME} from a thread that joined it. */
    @Option(names = "--netns", hidden = true, paramLabel = "NAME", converter = NetnsOption.class)
    NetworkNamespace netns = NetworkNamespace.host();

    @Override public Integer call() { return FlushedOutput.run(spec, this::list); }

    private int list(PrintWriter out, PrintWriter err) {
        String[] wanted = service == null ? null : service.split("/", -1);
        if (wanted != null && (wanted.length != 2 || wanted[0].isEmpty() || wanted[1].isEmpty())) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--service': " + service
                    + " (allowed: NAMESPACE/NAME, e.g. demo/hello)");
        }
        NodeOptions.Rendered rendered = nodeOptions.render(err, liveCluster, LocalDetection.DEFAULT);
        if (rendered == null) return ExitCodes.INPUT_UNREADABLE;
        Renderer.Rendering r = rendered.rendering();
        Callable<List<ServiceFlow>> read = () -> new ConntrackLister().list(r.state(IpFamily.IPV4), r.state(IpFamily.IPV6));
        List<ServiceFlow> flows;
        try {
            flows = netns.call(read);
        } catch (Exception e) {
            if (e instanceof NetlinkException ne && (ne.errno() == LibC.EPERM)) {
                err.println("nftproxy: cannot read the conntrack table: permission denied (needs CAP_NET_ADMIN): " + e.getMessage());
                return ExitCodes.PERMISSION_DENIED;
            }
            err.println("nftproxy: cannot read the conntrack table" + netns.name().map(n -> " of netns " + n).orElse("") + ": " + e.getMessage());
            return ExitCodes.SYNC_FAILED;
        }
        int shown = 0;
        for (ServiceFlow f : flows) {
            ServicePortName n = f.service();
            if (wanted != null && !(n.namespace().equals(wanted[0]) && n.name().equals(wanted[1]))) continue;
            if (shown++ == 0) out.printf("%-28s %-5s %-47s %-47s %-12s %s%n", "SERVICE", "PROTO", "ORIGINAL", "REPLY", "VIA", "STATE");
            FlowEntry e = f.flow();
            out.printf("%-28s %-5s %-47s %-47s %-12s %s%n", n.elementComment(), e.protocolName(),
                    e.origSrc().withPort(e.origSrcPort()) + " -> " + e.origDst().withPort(e.origDstPort()),
                    e.replySrc().withPort(e.replySrcPort()) + " -> " + e.replyDst().withPort(e.replyDstPort()),
                    via(f.via()), e.state());
        }
        if (shown == 0) {
            out.println("no conntrack flows belong to " + (service == null ? "any service" : "service " + service));
        }
        return ExitCodes.OK;
    }

    /** The words kube-proxy's documentation uses for each kind of service address. */
    static String via(ServiceFlow.Via v) {
        return switch (v) {
            case CLUSTER_IP -> "ClusterIP";
            case NODE_PORT -> "NodePort";
            case EXTERNAL_IP -> "externalIP";
            case LOAD_BALANCER_IP -> "LoadBalancer";
        };
    }
}
