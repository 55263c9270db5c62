package io.nftproxy.cli;

import io.nftproxy.cluster.NodeObject;
import io.nftproxy.service.Diagnostic;
import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.NodeContext;
import io.nftproxy.config.ConfigException;
import io.nftproxy.config.LocalDetection;
import io.nftproxy.config.NodePortAddresses;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.node.NodeResolver;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import io.nftproxy.source.LoadProblem;
import io.nftproxy.source.LoadResult;
import io.nftproxy.source.ManifestLoader;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The options every offline subcommand shares: where the cluster objects come from and which node the table is
 * for. Flag names and defaults follow kube-proxy's. {@link #render} turns them into the renderer's inputs.
 */
public final class NodeOptions {
    /** {@link TableLayout#DEFAULT}'s spelling, as an annotation needs a constant (a test keeps the two equal). */
    static final String DEFAULT_LAYOUT = "flat";

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--manifests", paramLabel = "DIR",
            description = {"Directory of Kubernetes objects in API format (*.yaml, *.yml, *.json; read recursively, "
                    + "multi-document YAML and 'kind: List' allowed): v1 Service, discovery.k8s.io/v1 EndpointSlice, "
                    + "v1 Node, networking.k8s.io/v1 ServiceCIDR. Other kinds are ignored.",
                    "Example: --manifests examples"})
    Path manifests;

    @Option(names = "--hostname-override", paramLabel = "NAME",
            description = {"Name of the node the table is rendered for. Endpoints with this nodeName are local; the "
                    + "Node object of this name supplies node IPs and zone.", "Example: --hostname-override k8s-node-1"})
    String hostname;

    @Option(names = "--cluster-cidr", split = ",", paramLabel = "CIDR",
            converter = Converters.Prefix.class,
            description = {"Pod network range(s), comma-separated, one per family. Traffic to a ClusterIP from outside "
                    + "it is masqueraded; pod traffic short-circuits externalTrafficPolicy Local. Default: none.",
                    "Example: --cluster-cidr 172.20.0.0/16,fd00:172:20::/64"})
    List<IpPrefix> clusterCidrs = new ArrayList<>();

    @Option(names = "--nodeport-addresses", split = ",", paramLabel = "primary|CIDR[,CIDR...]", hideParamSyntax = true,
            defaultValue = NodePortAddresses.PRIMARY,
            description = {"Which local addresses accept NodePort traffic: '" + NodePortAddresses.PRIMARY + "' (each family's first "
                    + "node IP; a family without a node IP accepts on every local address, as kube-proxy does) or "
                    + "comma-separated CIDRs (0.0.0.0/0 or ::/0 for every address of that family).",
                    "Default: ${DEFAULT-VALUE}. Example: --nodeport-addresses 192.168.10.0/24"})
    List<String> nodePortAddresses = new ArrayList<>();

    @Option(names = "--node-ip", split = ",", paramLabel = "IP",
            converter = Converters.Address.class,
            description = {"The node's IP(s), at most one per family. Default: the InternalIP (else ExternalIP) "
                    + "addresses of the Node object named by --hostname-override.",
                    "Example: --node-ip 192.168.10.20,fd00:10::20"})
    List<IpAddress> nodeIPs = new ArrayList<>();

    @Option(names = "--masquerade-all",
            description = "Masquerade all traffic to ClusterIPs, not only traffic from outside --cluster-cidr.")
    boolean masqueradeAll;

    @Option(names = "--masquerade-bit", paramLabel = "N", defaultValue = "" + NodeContext.DEFAULT_MASQUERADE_BIT,
            description = {"Bit of the packet mark (0..31) that flags traffic for masquerading.",
                    "Default: ${DEFAULT-VALUE} (mark 0x4000)."})
    int masqueradeBit;

    @Option(names = "--table-layout", paramLabel = "flat|fast|upstream", converter = Converters.Layout.class,
            defaultValue = DEFAULT_LAYOUT,
            description = {"How service ports are dispatched: 'flat' (service ports with Cluster traffic policies, no "
                    + "affinity, no source ranges and 1-16 endpoints get no chains: they are elements of shared flat-* "
                    + "sets and maps, so a change to them commits in about a millisecond at any size; every other port "
                    + "as in 'fast'), 'fast' (a chain per service port whose endpoint pick is a cascade of 'numgen "
                    + "random mod K 0' rules; linear kernel load time) or 'upstream' (kube-proxy 1.36's rule text, one "
                    + "anonymous numgen map per service). Packet behaviour is the same in all three; see "
                    + "docs/table-layout.md.", "Default: ${DEFAULT-VALUE}."})
    TableLayout tableLayout;

    @Option(names = "--refuse-external-ip-overlaps",
            description = {"Skip an externalIP or LoadBalancer IP that is another Service's ClusterIP or one of this "
                    + "node's addresses (logged with the reason and counted in nftproxy_invalid_objects_total), instead "
                    + "of keeping it with a warning. Such an address intercepts the other Service's or the node's "
                    + "traffic (CVE-2020-8554); kube-proxy accepts it silently and has no such option."})
    boolean refuseExternalIPOverlaps;

    @Option(names = "--verbose",
            description = "Also list manifest objects that were ignored because the proxy does not read their kind.")
    boolean verbose;

    /** The node the table is rendered for and what the renderer made of it. */
    public record Rendered(NodeContext node, Renderer.Rendering rendering) {}

    /**
     * Loads the manifests, or the live cluster when {@code live} has a kubeconfig (then without --manifests), builds
     * the node context with the local-traffic detector {@code detection}, validated as the daemon validates it, and
     * renders. Load problems, node diagnostics and skipped objects go to {@code err}, one line each. Returns null
     * when the source cannot be read (also reported), so the caller exits with INPUT_UNREADABLE.
     *
     * @throws ParameterException a flag value is invalid (exit code 2)
     */
    public Rendered render(PrintWriter err, LiveCluster live, LocalDetection detection) {
        boolean fromApi = live.kubeconfig != null;
        if (fromApi && manifests != null) {
            throw new ParameterException(mixee.commandLine(), "Invalid value for options '--manifests' and "
                    + "'--kubeconfig': both given (allowed: one source, a directory or a live cluster)");
        }
        // Not required at parse time: the daemon takes these from --config or Kubernetes instead.
        if (manifests == null && !fromApi) {
            throw new ParameterException(mixee.commandLine(),
                    "Missing required option: '--manifests=DIR' (or '--kubeconfig=FILE' to read the live cluster)");
        }
        if (hostname == null) throw new ParameterException(mixee.commandLine(), "Missing required option: '--hostname-override=NAME'");
        ProxyConfig config = config(detection);
        LoadResult load;
        try {
            load = fromApi ? live.read(hostname) : new ManifestLoader().load(manifests);
        } catch (IOException e) {
            err.println(fromApi ? "nftproxy: --kubeconfig " + live.kubeconfig + ": " + e.getMessage() : unreadable(manifests, e));
            return null;
        }
        NodeObject nodeObject = load.snapshot().node(config.hostnameOverride());
        NodeResolver.Resolved r = NodeResolver.resolve(config, nodeObject, null);
        for (LoadProblem p : load.problems()) err.println("warning: " + p.describe("skipped"));
        if (verbose) {
            for (LoadProblem p : load.ignored()) err.println("info: " + p.describe("ignored"));
        }
        for (Diagnostic d : r.diagnostics()) err.println("warning: " + d);
        if (nodeObject == null && config.nodeIPs().isEmpty()) {
            err.println("warning: no Node named " + InvalidInputException.printable(config.hostnameOverride()) + " in "
                    + (fromApi ? "the cluster" : manifests) + " and no --node-ip: NodePorts are accepted on every local address");
        }
        Renderer.Rendering rendering = config.renderer().render(load.snapshot(), r.node());
        for (Diagnostic d : rendering.diagnostics()) err.println("warning: " + d);
        return new Rendered(r.node(), rendering);
    }

    /** The one-line error for a manifest directory that could not be read (exit code 1). */
    static String unreadable(Path manifests, IOException e) {
        if (e instanceof NoSuchFileException || e instanceof NotDirectoryException) {
            return "nftproxy: --manifests " + manifests + ": no such directory";
        }
        if (e instanceof AccessDeniedException) return "nftproxy: --manifests " + manifests + ": permission denied";
        return "nftproxy: --manifests " + manifests + ": cannot be read: " + io.nftproxy.config.UnreadableFile.reason(manifests, e);
    }

    /** The node flags {@code pr} matched, over {@code b}; each value parsed, the rules left to validate. */
    void overlay(ProxyConfig.Builder b, ParseResult pr) {
        if (pr.hasMatchedOption("--hostname-override")) b.hostnameOverride = hostname;
        if (pr.hasMatchedOption("--cluster-cidr")) b.clusterCidrs = clusterCidrs;
        if (pr.hasMatchedOption("--nodeport-addresses")) {
            b.nodePortAddresses = NodePortAddresses.parse("nodePortAddresses", "--nodeport-addresses", nodePortAddresses);
        }
        if (pr.hasMatchedOption("--node-ip")) b.nodeIPs = nodeIPs;
        if (pr.hasMatchedOption("--masquerade-all")) b.masqueradeAll = masqueradeAll;
        if (pr.hasMatchedOption("--masquerade-bit")) b.masqueradeBit = masqueradeBit;
        if (pr.hasMatchedOption("--manifests")) b.manifests = manifests;
        if (pr.hasMatchedOption("--table-layout")) b.tableLayout = tableLayout;
        if (pr.hasMatchedOption("--refuse-external-ip-overlaps")) b.refuseExternalIPOverlaps = refuseExternalIPOverlaps;
    }

    /** The node flags with {@code detection}, validated by the daemon's rules and refused in its words. */
    private ProxyConfig config(LocalDetection detection) {
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        try {
            overlay(b, mixee.commandLine().getParseResult());
            b.detectLocal = detection;
            return b.validate();
        } catch (ConfigException e) {
            throw new ParameterException(mixee.commandLine(), "Invalid value: " + e.getMessage());
        }
    }

}
