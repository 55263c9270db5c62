package io.nftproxy.cli;

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
 * {@code nftproxy cleanup}: what {@code kube-proxy --cleanup} does for nftables mode. Deletes {@code table ip
 * kube-proxy} and {@code table ip6 kube-proxy} and nothing else. Each family is one transaction of
 * {@code add table} then {@code delete table}, so a missing table is no error and a table created between a check
 * and the delete cannot survive it.
 */
@Command(name = "cleanup",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {"Delete table ip kube-proxy and table ip6 kube-proxy from this network namespace, and nothing "
                + "else: other tables (firewalls, CNI rules) are left alone. A missing table is fine. Needs CAP_NET_ADMIN.",
                "",
                "Stop the daemon first, or it writes the tables again at once.",
                ""},
        footer = {"", "Examples:",
                "  nftproxy cleanup",
                "", "Exit codes: 0 both tables gone, 3 nft unavailable, 4 permission denied, 5 nft or the kernel refused."})
public final class CleanupCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--nft-mode", paramLabel = "library|exec|auto", defaultValue = "auto",
            converter = RunCommand.ModeConverter.class,
            description = {"How to talk to nftables: 'library', 'exec' or 'auto'. Default: ${DEFAULT-VALUE}."})
    NftClients.Mode nftMode;

    /** For tests and tools: act on {@code /run/netns/NAME} from a thread that joined it. */
    @Option(names = "--netns", hidden = true, paramLabel = "NAME")
    String netns;

    private final RunCommand.ClientFactory clients;

    public CleanupCommand() { this(RunCommand.KERNEL); }

    /** With the nft client opened by {@code clients}: tests hand in one whose nft is missing. */
    public CleanupCommand(RunCommand.ClientFactory clients) { this.clients = clients; }

    @Override public Integer call() { return FlushedOutput.run(spec, this::cleanup); }

    /** Also {@code run --cleanup}, kube-proxy's spelling. */
    int cleanup(PrintWriter out, PrintWriter err) {
        NftClients.Selection selection = RunCommand.openOrExplain(clients, nftMode, netns, err);
        if (selection == null) return ExitCodes.NFT_UNAVAILABLE;
        try (NftClient client = selection.client()) {
            // Exec mode opens without running nft: find out now whether it runs at all, so that a missing nft is
            // "unavailable" (3), as documented, not a refused transaction (5).
            try {
                client.capabilities();
            } catch (NftException e) {
                if (e.isPermission()) {
                    err.println("nftproxy: permission denied: nftables needs CAP_NET_ADMIN in this network namespace ("
                            + e.getMessage() + ")");
                    return ExitCodes.PERMISSION_DENIED;
                }
                err.println("nftproxy: nft unavailable (" + client.describe() + "): " + e.getMessage());
                return ExitCodes.NFT_UNAVAILABLE;
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
            return ExitCodes.OK;
        }
    }
}
