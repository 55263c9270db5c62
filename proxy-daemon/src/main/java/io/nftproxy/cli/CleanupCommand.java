package io.nftproxy.cli;

import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.TableSpec;
import io.nftproxy.nft.Transaction;
import io.nftproxy.net.IpFamily;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/**
 * {@code nftproxy cleanup}: deletes {@code table ip kube-proxy} and {@code table ip6 kube-proxy}, nothing else; with
 * {@code --other-modes} only what kube-proxy's iptables and IPVS modes left ({@link io.nftproxy.node.OtherModeLeftovers}),
 * and with {@code --all} both, which is what {@code kube-proxy --cleanup} (and {@code run --cleanup}) does. Each family
 * is one transaction of {@code add table} then {@code delete table}, so a missing table is no error and a table
 * created between a check and the delete cannot survive it.
 */
@Command(name = "cleanup",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {"Delete table ip kube-proxy and table ip6 kube-proxy from this network namespace, nothing else. "
                + "A missing table is fine. Needs CAP_NET_ADMIN.",
                "",
                "--other-modes deletes instead what kube-proxy's iptables mode leaves (KUBE-SERVICES, KUBE-SVC-..., in "
                        + "iptables-nft and iptables-legacy, where installed) and, where ip_vs is loaded, its IPVS mode's "
                        + "(every IPVS virtual server, kube-ipvs0, its chains and ip sets); the daemon does that itself "
                        + "after its first sync. --all deletes both, as kube-proxy --cleanup does. Other tables and chains "
                        + "(firewalls, CNI rules, kubelet's KUBE-FIREWALL) are always left alone.",
                "",
                "While an nftproxy daemon runs in this network namespace it would write the tables again at once: "
                        + "cleanup (and --all) then says which process it is and deletes nothing, unless --force.",
                ""},
        footer = {"", "Examples:",
                "  nftproxy cleanup",
                "  nftproxy cleanup --other-modes",
                "  nftproxy cleanup --all",
                "", "Exit codes: 0 everything asked for gone, 3 nft unavailable, 4 permission denied, 5 nft or the kernel "
                + "refused, 8 a daemon runs here (nothing deleted; --force deletes all the same)."})
public final class CleanupCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--nft-mode", paramLabel = "library|exec|auto", defaultValue = "auto",
            converter = RunCommand.ModeConverter.class,
            description = {"How to talk to nftables: 'library', 'exec' or 'auto'. Default: ${DEFAULT-VALUE}."})
    NftClients.Mode nftMode;

    @Option(names = "--other-modes",
            description = {"Delete only what kube-proxy's iptables and IPVS modes left; our tables stay."})
    boolean otherModes;

    @Option(names = "--all",
            description = {"Delete our tables and what kube-proxy's iptables and IPVS modes left, as kube-proxy --cleanup."})
    boolean all;

    @Option(names = "--force",
            description = {"Delete the tables even while a daemon runs in this network namespace (it writes them again)."})
    boolean force;

    /** For tests and tools: act on {@code /run/netns/NAME} from a thread that joined it. */
    @Option(names = "--netns", hidden = true, paramLabel = "NAME", converter = NetnsOption.class)
    NetworkNamespace netns = NetworkNamespace.host();

    private final RunCommand.ClientFactory clients;

    public CleanupCommand() { this(RunCommand.KERNEL); }

    /** With the nft client opened by {@code clients}: tests hand in one whose nft is missing. */
    public CleanupCommand(RunCommand.ClientFactory clients) { this.clients = clients; }

    @Override public Integer call() { return FlushedOutput.run(spec, this::cleanup); }

    /** Also {@code run --cleanup}, kube-proxy's spelling (with {@code all}). */
    int cleanup(PrintWriter out, PrintWriter err) {
        if (otherModes && all) {
            err.println("nftproxy: --other-modes and --all: give one (--all already includes the other modes' leftovers)");
            return ExitCodes.USAGE;
        }
        // The daemon's own tables are not touched: no daemon to ask, nothing it would write again.
        if (otherModes) return removeOtherModesLeftovers(out, err);
        java.util.Optional<String> daemon = java.util.Optional.empty();
        try {
            daemon = io.nftproxy.netlink.lock.NetnsLock.holder(netns);
        } catch (java.io.IOException e) {
            err.println("warning: cannot tell whether a daemon runs here: " + e.getMessage());
        }
        if (daemon.isPresent()) {
            if (!force) {
                err.println("nftproxy: not deleting: a daemon writes the tables of this network namespace (" + daemon.get()
                        + ") and would write them again at once; stop it first, or give --force");
                return ExitCodes.DAEMON_RUNNING;
            }
            err.println("warning: a daemon writes the tables of this network namespace (" + daemon.get()
                    + "); deleting them anyway (--force): it will write them again");
        }
        NftClients.Selection selection = RunCommand.openOrExplain(clients, nftMode, netns, err);
        if (selection == null) return ExitCodes.NFT_UNAVAILABLE;
        try (NftClient client = selection.client()) {
            // Exec mode opens without running nft: find out now whether it runs at all, so that a missing nft is
            // "unavailable" (3), as documented, not a refused transaction (5).
            try {
                client.capabilities();
            } catch (NftException e) {
                err.println(RunCommand.firstCallFailed(e, client.describe()));
                return RunCommand.firstCallExit(e);
            }
            for (IpFamily f : IpFamily.values()) {
                String table = "table " + f.nftFamily() + " " + TableContent.TABLE_NAME;
                try {
                    boolean present = client.listTableJson(f) != null;
                    client.apply(new Transaction(f).add(new TableSpec(TableContent.TABLE_COMMENT))
                            .delete(new TableSpec(TableContent.TABLE_COMMENT)));
                    out.println(present ? "deleted " + table : table + ": not present, nothing to delete");
                } catch (NftException e) {
                    if (e.isPermission()) {
                        err.println("nftproxy: cannot delete " + table + ": permission denied: nftables needs CAP_NET_ADMIN "
                                + "in this network namespace (" + e.getMessage() + ")");
                        return ExitCodes.PERMISSION_DENIED;
                    }
                    err.println("nftproxy: cannot delete " + table + ": " + e.getMessage());
                    return ExitCodes.SYNC_FAILED;
                }
            }
            return all ? removeOtherModesLeftovers(out, err) : ExitCodes.OK;
        }
    }

    /** kube-proxy's --cleanup also removes its iptables mode's chains, and fails when it cannot. */
    private int removeOtherModesLeftovers(PrintWriter out, PrintWriter err) {
        io.nftproxy.node.OtherModeLeftovers.Outcome o = new io.nftproxy.node.OtherModeLeftovers(netns).remove();
        if (!o.removed().isEmpty()) out.println("deleted kube-proxy's iptables/IPVS-mode leftovers, " + o.summary());
        else if (o.failures().isEmpty()) out.println("kube-proxy's iptables/IPVS-mode leftovers: none, nothing to delete");
        o.failures().forEach(f -> err.println("nftproxy: cannot delete kube-proxy's iptables/IPVS-mode leftovers: " + f));
        return o.failures().isEmpty() ? ExitCodes.OK : ExitCodes.SYNC_FAILED;
    }
}
