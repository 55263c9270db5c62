package io.nftproxy.cli;

import io.nftproxy.config.ConfigException;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.node.ConntrackSysctls;
import io.nftproxy.node.OtherModeLeftovers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * {@code nftproxy run}: programs the kernel through the daemon ({@link DaemonLauncher}), running, or its sync once
 * ({@code --once}), both with the configuration of {@link RunConfiguration}; or one of kube-proxy's one-shot steps.
 */
@Command(name = "run",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {"Program the kube-proxy tables (table ip kube-proxy, table ip6 kube-proxy) in this network "
                + "namespace and keep them in step with the cluster. Needs CAP_NET_ADMIN.",
                "",
                "The daemon watches Services, EndpointSlices, this node's Node object and ServiceCIDRs (from the API "
                        + "server, or from a --manifests directory it watches), applies each change as one atomic "
                        + "transaction per family, repairs the tables at once when anyone else changes them, serves "
                        + "/healthz and /livez, /metrics, and health-check NodePorts, and cleans stale UDP conntrack "
                        + "entries. SIGTERM stops it and leaves the rules in place.",
                "",
                "With --once: the daemon's sync, once: the same configuration and validation, both tables applied "
                        + "from --manifests, then stale UDP conntrack entries deleted. Whatever the kernel already "
                        + "holds correctly is left untouched; anything else nftproxy did not write is replaced.",
                "",
                "Before the daemon starts it sets the conntrack sysctls as kube-proxy does (--conntrack-*, conntrack.* "
                        + "in --config; 0 leaves one as it is); --init-only does only that.",
                "",
                "Once its first sync has programmed both tables, the daemon removes what kube-proxy's iptables and IPVS "
                        + "modes left (their rules serve the node's Services until then); kube-proxy does it before its "
                        + "first sync. --dry-run checks this node and configuration and says what a start would change, "
                        + "changing nothing.",
                "",
                "kube-proxy's flags for nftables mode are accepted under their names (--proxy-mode=nftables, -v N, "
                        + "--logging-format, --cleanup, --init-only, --detect-local-mode, --pod-bridge-interface, "
                        + "--pod-interface-name-prefix, --bind-address, --conntrack-*, --write-config-to, --master); "
                        + "'nftproxy FLAGS' with no command is 'nftproxy run FLAGS', as kube-proxy is invoked. Those "
                        + "that change nothing here (--oom-score-adj, --profiling, --ipvs-*, ...) are accepted at any "
                        + "value with one warning each (docs/cli.md lists them).",
                ""},
        footer = {"", "Examples:",
                "  nftproxy run --kubeconfig /etc/nftproxy/kubeconfig \\",
                "      --hostname-override k8s-node-1 --cluster-cidr 10.244.0.0/16",
                "  nftproxy run --config /etc/nftproxy/config.yaml",
                "  nftproxy run --manifests examples --hostname-override k8s-node-1",
                "  nftproxy run --once --manifests examples --hostname-override k8s-node-1",
                "  nftproxy run --config /etc/nftproxy/config.yaml --dry-run",
                "", "Exit codes: 0 applied (--once), sysctls set (--init-only), configuration written "
                + "(--write-config-to), every check passed (--dry-run) or stopped by SIGTERM, 1 --manifests missing or "
                + "unreadable, a sysctl or the --write-config-to file not writable, 2 invalid flag, or the --config file "
                + "or kubeconfig unreadable or malformed, 3 nft unavailable, 4 permission denied (nftables or a sysctl), "
                + "5 transaction refused by nft or the kernel (--once; the daemon retries instead), 8 --cleanup while a "
                + "daemon runs here, 10 --dry-run: the API server unusable. The daemon never exits because of the API "
                + "server (unreachable, no such name, silent, untrusted certificate, credentials refused, 429/5xx): it "
                + "retries forever, /livez 200 and /healthz 503 naming the cause until the first sync."})
public final class RunCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);

    /**
     * Opens the nft client, telling {@code childStarted} the pid of each nft child (exec mode), so the change monitor
     * knows our own commits; a seam so tests can hand in a fake, which starts no children.
     */
    @FunctionalInterface
    public interface ClientFactory {
        NftClients.Selection open(NftClients.Mode mode, NetworkNamespace netns, LongConsumer childStarted) throws IOException;
    }

    static final ClientFactory KERNEL = NftClients::createInNamespace;

    @Spec
    CommandSpec spec;

    @Mixin
    NodeOptions nodeOptions;

    @Option(names = "--once", description = "Apply the tables once from --manifests and exit (0 when applied).")
    boolean once;

    @Option(names = "--cleanup",
            description = "As kube-proxy's --cleanup: delete table ip kube-proxy and table ip6 kube-proxy and what kube-proxy's "
                    + "iptables and IPVS modes left, then exit (as 'nftproxy cleanup --all').")
    boolean cleanup;

    @Option(names = "--init-only",
            description = "As kube-proxy's --init-only: set the conntrack sysctls (the step that needs more than CAP_NET_ADMIN) "
                    + "and exit. A daemon started afterwards with the same configuration finds them set and needs CAP_NET_ADMIN "
                    + "alone. Unlike kube-proxy's, it removes no other mode's rules: the daemon does, after its first sync.")
    boolean initOnly;

    @Option(names = "--dry-run",
            description = "Check this node and the configuration and exit, changing nothing: the configuration, the API server "
                    + "(or --manifests), nft and libnftables, whether a daemon runs here, the conntrack sysctls a start would "
                    + "set and the iptables/IPVS-mode leftovers the daemon would remove after its first sync.")
    boolean dryRun;

    @Mixin
    KubeProxyFlags kubeProxyFlags;

    @Mixin
    LocalDetectorFlags localDetector;

    @Option(names = "--config", paramLabel = "FILE",
            description = {"A KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) YAML file; the fields nftproxy "
                    + "uses are listed in docs/configuration.md. Flags given explicitly override it."})
    Path config;

    @Option(names = "--kubeconfig", paramLabel = "FILE",
            description = {"Kubeconfig for the API server. Default: $KUBECONFIG, else ~/.kube/config, else the pod's "
                    + "service account; the start log says which. Not together with --manifests."})
    Path kubeconfig;

    @Option(names = "--healthz-bind-address", paramLabel = "IP:PORT",
            description = {"Where /healthz and /livez are served (port 0 disables). Default: 0.0.0.0:10256."})
    String healthzBindAddress;

    @Option(names = "--metrics-bind-address", paramLabel = "IP:PORT",
            description = {"Where /metrics and /proxyMode are served (port 0 disables). Default: 127.0.0.1:10249."})
    String metricsBindAddress;

    @Option(names = {"--min-sync-period", "--iptables-min-sync-period"}, paramLabel = "DURATION",
            description = {"Least time between two syncs; bursts of changes coalesce into one. Default: 100ms."})
    String minSyncPeriod;

    @Option(names = {"--sync-period", "--iptables-sync-period"}, paramLabel = "DURATION",
            description = {"Longest time between two syncs (a no-op when nothing changed) and the retry ceiling after "
                    + "a failure; /healthz fails when a change waited twice this long. Default: 30s."})
    String syncPeriod;

    @Option(names = "--nft-mode", paramLabel = "library|exec|auto", defaultValue = "auto",
            converter = ModeConverter.class,
            description = {"How to talk to nftables: 'library' (libnftables in-process), 'exec' (run the nft binary) "
                    + "or 'auto' (the library when it loads, else the binary).", "Default: ${DEFAULT-VALUE}."})
    NftClients.Mode nftMode;

    @Option(names = {"-v", "--v"}, paramLabel = "N",
            description = {"Log verbosity, as kube-proxy's: 0 and 1 log start, stop and problems (INFO); 2 and 3 add "
                    + "one line per sync; 4 and more add nftproxy's DEBUG lines and the libraries' INFO lines. "
                    + "Default: 0, or logging.verbosity from --config."})
    Integer verbosity;

    @Option(names = "--logging-format", paramLabel = "text|json",
            description = {"'text': one logfmt line per event (every free-text value quoted); 'json': one JSON object "
                    + "per line. Logs go to stderr. Default: text, or logging.format from --config."})
    String loggingFormat;

    /** For tests and tools: act on {@code /run/netns/NAME} from a thread that joined it; the JVM stays put. */
    @Option(names = "--netns", hidden = true, paramLabel = "NAME", converter = NetnsOption.class)
    NetworkNamespace netns = NetworkNamespace.host();

    final ClientFactory clients;
    /** Where the conntrack sysctls of {@code netns} are read and written; a seam for tests. */
    private final Function<NetworkNamespace, ConntrackSysctls.Access> sysctls;
    /** Removes kube-proxy's other modes' leftovers in {@code netns}; a seam for tests. */
    private final Function<NetworkNamespace, OtherModeLeftovers.Outcome> leftovers;
    /** Finds them without removing them ({@code --dry-run}); a seam for tests. */
    private final Function<NetworkNamespace, OtherModeLeftovers.Outcome> leftoversFound;

    public RunCommand() { this(KERNEL, ConntrackSysctls::kernel, netns -> new OtherModeLeftovers(netns).remove()); }

    RunCommand(ClientFactory clients, Function<NetworkNamespace, ConntrackSysctls.Access> sysctls,
               Function<NetworkNamespace, OtherModeLeftovers.Outcome> leftovers) {
        this(clients, sysctls, leftovers, netns -> new OtherModeLeftovers(netns).find());
    }

    RunCommand(ClientFactory clients, Function<NetworkNamespace, ConntrackSysctls.Access> sysctls,
               Function<NetworkNamespace, OtherModeLeftovers.Outcome> leftovers,
               Function<NetworkNamespace, OtherModeLeftovers.Outcome> leftoversFound) {
        this.clients = clients;
        this.sysctls = sysctls;
        this.leftovers = leftovers;
        this.leftoversFound = leftoversFound;
    }

    @Override public Integer call() { return FlushedOutput.run(spec, this::run); }

    private int run(PrintWriter out, PrintWriter err) {
        RunConfiguration rc;
        try {
            rc = RunConfiguration.of(this, spec.commandLine().getParseResult());
        } catch (ConfigException e) {
            err.println("nftproxy: invalid configuration: " + e.getMessage());
            return ExitCodes.USAGE;
        } catch (IOException e) {
            err.println("nftproxy: --config " + config + ": cannot be read: " + io.nftproxy.config.UnreadableFile.reason(config, e));
            // As a malformed one: only an operator puts it right, so the unit must not restart it (RestartPreventExitStatus).
            return ExitCodes.USAGE;
        }
        ProxyConfig effective = rc.config();
        effective.logging().apply();
        rc.notes().forEach(n -> LOG.atLevel(n.level()).log("config {}", n));
        if (dryRun) {
            if (cleanup || initOnly || once || kubeProxyFlags.writeConfigTo != null) {
                err.println("nftproxy: --dry-run checks what the daemon's start would do; it does not combine with --cleanup, "
                        + "--init-only, --once or --write-config-to");
                return ExitCodes.USAGE;
            }
            return new NodeCheck(this, sysctls, leftoversFound).run(effective, rc.notes().size(), out);
        }
        if (kubeProxyFlags.writeConfigTo != null) return writeConfig(effective, out, err);
        if (cleanup) {
            CleanupCommand c = new CleanupCommand();
            c.nftMode = effective.nftMode();
            c.netns = netns;
            c.all = true;
            return c.cleanup(out, err);
        }
        // Other modes' leftovers go after the daemon's first sync (DaemonLauncher), never before: until then they
        // are what serves this node's Services.
        if (initOnly) return setConntrackSysctls(effective, out, err);
        if (once) return new DaemonLauncher(this).run(effective, true, out, err);
        int set = setConntrackSysctls(effective, null, err);
        return set != ExitCodes.OK ? set : new DaemonLauncher(this).run(effective, false, out, err);
    }

    /** As kube-proxy's --write-config-to: the effective configuration as a KubeProxyConfiguration, then exit. */
    private int writeConfig(ProxyConfig c, PrintWriter out, PrintWriter err) {
        Path to = kubeProxyFlags.writeConfigTo;
        try {
            java.nio.file.Files.writeString(to, io.nftproxy.config.ConfigDocument.yaml(c));
        } catch (IOException e) {
            err.println("nftproxy: --write-config-to " + to + ": cannot be written (" + e.getMessage() + ")");
            return ExitCodes.INPUT_UNREADABLE;
        }
        out.println("wrote the effective configuration to " + to);
        return ExitCodes.OK;
    }

    /**
     * kube-proxy's start-up step: the conntrack sysctls, before anything else. Each change is logged; with
     * {@code --init-only} also printed on {@code out} (null otherwise). A sysctl that cannot be written where the
     * kernel offers it stops the start, as in kube-proxy.
     */
    private int setConntrackSysctls(ProxyConfig c, PrintWriter out, PrintWriter err) {
        List<ConntrackSysctls.Outcome> done;
        try {
            done = ConntrackSysctls.apply(ConntrackSysctls.plan(c.conntrack(), ConntrackSysctls.cpus()), sysctls.apply(netns));
        } catch (IOException e) {
            err.println("nftproxy: conntrack sysctls: " + e.getMessage());
            return e instanceof java.nio.file.AccessDeniedException ? ExitCodes.PERMISSION_DENIED : ExitCodes.INPUT_UNREADABLE;
        }
        for (ConntrackSysctls.Outcome o : done) {
            if (o.status() == ConntrackSysctls.Status.NOT_SETTABLE_HERE) {
                LOG.warn("conntrack sysctl {}; set conntrack.maxPerCore: 0 (--conntrack-max-per-core=0) to leave it alone", o);
            } else if (o.status() == ConntrackSysctls.Status.HASHSIZE_NOT_SET) {
                LOG.warn("{}", o);
            } else if (o.status() == ConntrackSysctls.Status.SET) {
                LOG.info("conntrack sysctl {}", o);
            }
            if (out != null) out.println("conntrack sysctl " + o);
        }
        if (out != null && done.isEmpty()) out.println("conntrack sysctls: none to set (every conntrack setting is 0)");
        return ExitCodes.OK;
    }

    /**
     * The daemon, once its first sync has programmed both tables: kube-proxy's iptables and IPVS modes' rules go (as
     * kube-proxy in nftables mode removes them at start, but not before ours serve). Best effort, as there: what
     * failed is a warning and the daemon goes on.
     */
    void removeOtherModesLeftovers() {
        OtherModeLeftovers.Outcome o = leftovers.apply(netns);
        if (!o.removed().isEmpty()) LOG.info("removed kube-proxy's iptables/IPVS-mode leftovers, {}", o.summary());
        o.failures().forEach(f -> LOG.warn("cannot remove kube-proxy's iptables/IPVS-mode leftovers: {}", f));
    }

    /**
     * Opens nft in {@code netns}; when that fails, says why on {@code err} in one line and
     * returns null, and the caller exits with {@link ExitCodes#NFT_UNAVAILABLE}.
     */
    static NftClients.Selection openOrExplain(ClientFactory clients, NftClients.Mode mode, NetworkNamespace netns, PrintWriter err) {
        try {
            return clients.open(mode, netns, pid -> { });
        } catch (IOException | RuntimeException e) {
            err.println(cannotOpen(e, netns));
            return null;
        }
    }

    /** Why nft could not be opened in {@code netns}, in one line. */
    static String cannotOpen(Exception e, NetworkNamespace netns) {
        return e instanceof NftException ? "nftproxy: nft unavailable: " + e.getMessage()
                : "nftproxy: cannot open nft" + netns.name().map(n -> " in netns " + n).orElse("") + ": " + e.getMessage();
    }

    /** Why the first call to nft ({@code client}) failed, in one line: permission denied, or nft unavailable. */
    static String firstCallFailed(NftException e, String client) {
        return e.isPermission() ? "nftproxy: permission denied: nftables needs CAP_NET_ADMIN in this network namespace ("
                + e.getMessage() + ")" : "nftproxy: nft unavailable (" + client + "): " + e.getMessage();
    }

    /** {@link #firstCallFailed}'s exit code. */
    static int firstCallExit(NftException e) { return e.isPermission() ? ExitCodes.PERMISSION_DENIED : ExitCodes.NFT_UNAVAILABLE; }

    static final class ModeConverter implements picocli.CommandLine.ITypeConverter<NftClients.Mode> {
        @Override public NftClients.Mode convert(String value) {
            try {
                return NftClients.Mode.parse(value);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
