package io.nftproxy.cli;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.Protocol;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.proxy.NodeContext;
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
                        + "first connection: session-affinity sets are empty.",
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

    @Option(names = "--src", required = true, paramLabel = "IP", converter = Converters.Address.class,
            description = {"Source address of the packet: a pod, a node address, or a client off the node.",
                    "Example: --src 172.20.211.9"})
    IpAddress src;

    @Option(names = "--dst", required = true, paramLabel = "IP", converter = Converters.Address.class,
            description = {"Destination address: a ClusterIP, an externalIP, a LoadBalancer IP, a node IP (for a "
                    + "NodePort) or any other address. Same family as --src.", "Example: --dst 10.105.101.118"})
    IpAddress dst;

    @Option(names = "--proto", required = true, paramLabel = "tcp|udp|sctp", converter = Converters.Proto.class,
            description = {"Transport protocol.", "Example: --proto udp"})
    Protocol proto;

    @Option(names = "--dport", required = true, paramLabel = "N", converter = Converters.Port.class,
            description = {"Destination port, 1..65535: the service port, or the NodePort when --dst is a node IP.",
                    "Example: --dport 30080"})
    int dport;

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
    @Option(names = "--netns", hidden = true, paramLabel = "NAME")
    String netns;

    @Override public Integer call() { return FlushedOutput.run(spec, this::trace); }

    private int trace(PrintWriter out, PrintWriter err) {
        if (src.family() != dst.family()) {
            throw new ParameterException(spec.commandLine(), "Invalid value for options '--src' and '--dst': "
                    + src + " and " + dst + " are of different IP families (allowed: two IPv4 or two IPv6 addresses)");
        }
        NodeOptions.Rendered rendered = nodeOptions.render(err, liveCluster, localDetector.over(LocalDetection.DEFAULT));
        if (rendered == null) return ExitCodes.INPUT_UNREADABLE;
        NodeContext node = rendered.node();
        Renderer.Rendering rendering = rendered.rendering();

        OriginChoice origin = from != null ? new OriginChoice(from, "given with --from") : OriginChoice.guess(src, node);
        String mismatch = origin.mismatch(src, node);
        if (mismatch != null) err.println("warning: " + mismatch);
        Packet packet = new Packet(src, dst, proto, dport, origin.origin());
        if (kernel) {
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
        out.print(trace.render());
        return ExitCodes.OK;
    }
}
