package io.nftproxy.cli;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.Protocol;
import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.service.NodeContext;
import io.nftproxy.render.Renderer;
import io.nftproxy.trace.Origin;
import io.nftproxy.trace.Packet;
import io.nftproxy.trace.PacketTracer;
import io.nftproxy.trace.Trace;
import io.nftproxy.trace.TraceException;
import io.nftproxy.config.LocalDetection;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code nftproxy trace}: renders the table for one node, as {@code render} does, and walks the first packet of a
 * new connection through it: chain by chain, where it goes (DNAT targets, masquerade, REJECT, DROP, untouched)
 * and why. Needs no kernel and changes nothing. Stdout carries the origin line and the trace; warnings go to
 * stderr.
 */
@Command(name = "trace",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        showDefaultValues = false,
        description = {"Show where the first packet of a new connection goes through the kube-proxy table of one node.",
                "",
                "Renders the table from a directory of manifests exactly as 'nftproxy render' does (same node flags), "
                        + "then follows the packet hook by hook and chain by chain: each rule, whether it matched and "
                        + "why, every random endpoint pick as its own branch, and a final verdict: DNAT to which "
                        + "endpoints and whether the connection is masqueraded, REJECT, DROP, or UNTOUCHED (no rule of "
                        + "this table changes it). Needs no kernel and changes nothing. The trace assumes the client's "
                        + "first connection: session-affinity sets are empty. The line before the verdict names the "
                        + "Service port the table's dispatch maps matched (by the element's namespace/name:port "
                        + "comment or the chain named after the port), or says that none did.",
                "",
                "The packet is given as --src, --dst, --proto and --dport, or by a Service's name: --service "
                        + "NAMESPACE/NAME[:PORT] takes its ClusterIP (or, with --via, its NodePort on this node, its "
                        + "externalIP or its load-balancer IP) and its port; without --src the packet is the node's "
                        + "own (--from host).",
                "",
                "With --kubeconfig the objects come from the live cluster, listed once, instead of --manifests. With "
                        + "--kernel the packet goes through the table the kernel holds now (read back from nft; needs "
                        + "CAP_NET_ADMIN), and the last lines say whether the table the cluster implies sends it the "
                        + "same way, and if not, what differs between the two tables.",
                ""},
        footer = {"", "Examples (the shipped examples/ directory; node k8s-node-1 is 192.168.10.20):",
                "  # a pod calls the ClusterIP of demo/hello:",
                "  # DNAT to one of its 3 endpoints, no masquerade",
                "  nftproxy trace --manifests examples --hostname-override k8s-node-1 \\",
                "      --cluster-cidr 172.20.0.0/16 \\",
                "      --src 172.20.211.9 --dst 10.105.101.118 --proto tcp --dport 80",
                "  # the same by the Service's name (its ClusterIP, port and protocol)",
                "  nftproxy trace --manifests examples --hostname-override k8s-node-1 \\",
                "      --cluster-cidr 172.20.0.0/16 --src 172.20.211.9 --service demo/hello",
                "  # a LAN client opens NodePort 31950 of demo/hello-lb (eTP Local):",
                "  # DNAT to the local endpoint only, client address kept",
                "  nftproxy trace --manifests examples --hostname-override k8s-node-1 \\",
                "      --src 192.168.10.50 --dst 192.168.10.20 --proto tcp --dport 31950",
                "  # a client outside its loadBalancerSourceRanges opens the LB IP: DROP",
                "  nftproxy trace --manifests examples --hostname-override k8s-node-1 \\",
                "      --src 203.0.113.7 --dst 192.168.10.240 --proto tcp --dport 80",
                "  # a pod on k8s-node-2 whose packet arrives over the network: say so,",
                "  # since its address alone would make it a local pod",
                "  nftproxy trace --manifests examples --hostname-override k8s-node-1 \\",
                "      --cluster-cidr 172.20.0.0/16 \\",
                "      --src 172.20.172.9 --dst 10.105.101.118 --proto tcp --dport 80 \\",
                "      --from external",
                "  # on a node: the live cluster against the kernel's table (as root)",
                "  nftproxy trace --kubeconfig /etc/nftproxy/kubeconfig \\",
                "      --hostname-override \"$(hostname)\" --kernel \\",
                "      --src 172.20.211.9 --dst 10.105.101.118 --proto tcp --dport 80",
                "",
                "Exit codes: 0 traced (whatever the verdict; with --kernel: and the kernel's table agrees), "
                        + "1 --manifests or the API server unreadable, 2 invalid flag, 3 nft unavailable, "
                        + "4 permission denied, 6 the table could not be traced to an end, 9 (--kernel) the kernel's "
                        + "table sends the packet elsewhere than the cluster implies."})
public final class TraceCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    NodeOptions nodeOptions;

    @Mixin
    LiveCluster liveCluster;

    @Mixin
    LocalDetectorFlags localDetector;

    @Option(names = "--src", paramLabel = "IP", converter = Converters.Address.class,
            description = {"Source address of the packet: a pod, a node address, or a client off the node. Required, "
                    + "except with --service and --from host (or no --from), where it is the node's address.",
                    "Example: --src 172.20.211.9"})
    IpAddress src;

    @Option(names = "--service", paramLabel = "NAMESPACE/NAME[:PORT]",
            description = {"Trace to a Service instead of --dst, --proto and --dport: its address (see --via), its "
                    + "port's protocol and number. PORT is a port name or number; needed when the Service has more "
                    + "than one port. The first output line after the origin says which address and port were taken.",
                    "Example: --service demo/hello:http"})
    String service;

    @Option(names = "--via", paramLabel = "cluster-ip|node-port|external-ip|load-balancer", converter = Converters.Via.class,
            description = {"With --service: which of its addresses the packet goes to: 'cluster-ip', 'node-port' (its "
                    + "NodePort on this node's address of the family), 'external-ip' (its first externalIP) or "
                    + "'load-balancer' (its first load-balancer IP).", "Default: cluster-ip."})
    ServiceDestination.Via via;

    @Option(names = "--dst", paramLabel = "IP", converter = Converters.Address.class,
            description = {"Destination address: a ClusterIP, an externalIP, a LoadBalancer IP, a node IP (for a "
                    + "NodePort) or any other address. Same family as --src.", "Example: --dst 10.105.101.118"})
    IpAddress dst;

    @Option(names = "--proto", paramLabel = "tcp|udp|sctp", converter = Converters.Proto.class,
            description = {"Transport protocol.", "Example: --proto udp"})
    Protocol proto;

    @Option(names = "--dport", paramLabel = "N", converter = Converters.Port.class,
            description = {"Destination port, 1..65535: the service port, or the NodePort when --dst is a node IP.",
                    "Example: --dport 30080"})
    Integer dport;

    @Option(names = "--from", paramLabel = "external|pod|host", converter = Converters.From.class,
            description = {"Where the packet enters the node: 'external' (arrives from off the node, enters at "
                    + "prerouting), 'pod' (sent by a pod on this node, also enters at prerouting), 'host' (sent by "
                    + "a process on the node, enters at output).",
                    "Default: 'host' when --src is an address of the node (--node-ip or the Node object) or "
                            + "loopback, else 'pod' when --src is inside a --cluster-cidr, else 'external'. "
                            + "The first output line says which was chosen and why."})
    Origin from;

    @Option(names = "--kernel",
            description = {"Trace through the table the kernel holds (nft list table), not the one rendered from "
                    + "the objects, and say where the two differ. Needs CAP_NET_ADMIN."})
    boolean kernel;

    @Option(names = "--nft-mode", paramLabel = "library|exec|auto", defaultValue = "auto",
            converter = RunCommand.ModeConverter.class,
            description = {"With --kernel: how to read the table: 'library', 'exec' or 'auto'. Default: ${DEFAULT-VALUE}."})
    NftClients.Mode nftMode;

    /** For tests and tools: read the table of {@code /run/netns/NAME} from a thread that joined it. */
    @Option(names = "--netns", hidden = true, paramLabel = "NAME", converter = NetnsOption.class)
    NetworkNamespace netns = NetworkNamespace.host();

    @Override public Integer call() { return FlushedOutput.run(spec, this::trace); }

    private int trace(PrintWriter out, PrintWriter err) {
        checkPacketFlags();
        if (src != null && dst != null && src.family() != dst.family()) {
            throw new ParameterException(spec.commandLine(), "Invalid value for options '--src' and '--dst': "
                    + src + " and " + dst + " are of different IP families (allowed: two IPv4 or two IPv6 addresses)");
        }
        NodeOptions.Rendered rendered = nodeOptions.render(err, liveCluster, localDetector.over(LocalDetection.DEFAULT));
        if (rendered == null) return ExitCodes.INPUT_UNREADABLE;
        NodeContext node = rendered.node();
        Renderer.Rendering rendering = rendered.rendering();

        String destination = null;
        if (service != null) {
            ServiceDestination d;
            try {
                d = ServiceDestination.pick(service, via == null ? ServiceDestination.Via.CLUSTER_IP : via,
                        src == null ? null : src.family(), rendering, node);
            } catch (ServiceDestination.Unusable e) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--service': " + e.getMessage());
            }
            dst = d.dst();
            proto = d.port().protocol();
            dport = d.dport();
            destination = d.line();
            if (src == null) src = nodeAddress(node, dst);
        }
        OriginChoice origin = from != null ? new OriginChoice(from, "given with --from") : OriginChoice.guess(src, node);
        String mismatch = origin.mismatch(src, node);
        if (mismatch != null) err.println("warning: " + mismatch);
        Packet packet = new Packet(src, dst, proto, dport, origin.origin());
        if (kernel) {
            if (destination != null) out.println(destination);
            return KernelTrace.run(nftMode, netns, rendering.table(dst.family()), node, packet, origin, out, err);
        }
        Trace trace;
        try {
            trace = PacketTracer.trace(rendering.table(packet.dst().family()), node, packet);
        } catch (TraceException e) {
            err.println("nftproxy: trace: " + e.getMessage());
            return ExitCodes.UNTRACEABLE;
        }
        out.println(origin.line());
        if (destination != null) out.println(destination);
        out.print(trace.render());
        return ExitCodes.OK;
    }

    /** Either --service, or --dst, --proto and --dport; --src unless --service may take the node's address. */
    private void checkPacketFlags() {
        if (service != null) {
            List<String> given = new ArrayList<>();
            if (dst != null) given.add("'--dst'");
            if (proto != null) given.add("'--proto'");
            if (dport != null) given.add("'--dport'");
            if (!given.isEmpty()) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--service': given with "
                        + String.join(", ", given) + " (allowed: --service, or --dst, --proto and --dport)");
            }
            if (src == null && from != null && from != Origin.HOST) {
                throw new ParameterException(spec.commandLine(), "Missing required option: '--src=IP' (--from "
                        + from.name().toLowerCase(java.util.Locale.ROOT) + " needs the client's address: only a "
                        + "host's packet can take the node's)");
            }
            return;
        }
        if (via != null) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--via': only with --service");
        }
        List<String> missing = new ArrayList<>();
        if (src == null) missing.add("'--src=IP'");
        if (dst == null) missing.add("'--dst=IP'");
        if (proto == null) missing.add("'--proto=tcp|udp|sctp'");
        if (dport == null) missing.add("'--dport=N'");
        if (!missing.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "Missing required option" + (missing.size() > 1 ? "s" : "")
                    + ": " + String.join(", ", missing) + " (or --service NAMESPACE/NAME[:PORT])");
        }
    }

    /** A host's packet to {@code dst}: from the node's address of its family, as the kernel would pick it. */
    private IpAddress nodeAddress(NodeContext node, IpAddress dst) {
        List<IpAddress> ips = node.nodeIPs(dst.family());
        if (ips.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "Missing required option: '--src=IP' (node "
                    + node.nodeName() + " has no " + dst.family().nftFamily() + " address to send from: give --src or --node-ip)");
        }
        return ips.get(0);
    }
}
