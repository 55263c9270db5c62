package io.nftproxy.cli;

import io.nftproxy.config.ProxyConfig;
import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.lock.NetnsLock;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.node.ConntrackSysctls;
import io.nftproxy.node.OtherModeLeftovers;
import io.nftproxy.source.LoadResult;
import io.nftproxy.source.ManifestLoader;
import io.nftproxy.source.api.ApiServer;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@code nftproxy run --dry-run}: everything the daemon's start would find out, and what it would change, without
 * changing anything: the configuration (already validated by the caller), the API server or the manifests, nft and
 * libnftables, whether a daemon runs here already, the conntrack sysctls it would set and the other modes' leftovers
 * it would remove after its first sync. Only reads: nft is asked in dry-run mode ({@code nft -c}), the sysctls and
 * the iptables tables are read, the lock is looked at, not taken. One line per check; every check runs, and the exit
 * code is the first failing check's.
 */
final class NodeCheck {
    /** How long the check waits for the API server's first answer: a healthy one answers in milliseconds. */
    private static final java.time.Duration FIRST_CONTACT = java.time.Duration.ofSeconds(5);

    private final RunCommand cmd;
    private final Function<NetworkNamespace, ConntrackSysctls.Access> sysctls;
    private final Function<NetworkNamespace, OtherModeLeftovers.Outcome> leftovers;
    private int exit = ExitCodes.OK;

    NodeCheck(RunCommand cmd, Function<NetworkNamespace, ConntrackSysctls.Access> sysctls, Function<NetworkNamespace, OtherModeLeftovers.Outcome> leftovers) {
        this.cmd = cmd;
        this.sysctls = sysctls;
        this.leftovers = leftovers;
    }

    int run(ProxyConfig config, int notes, PrintWriter out) {
        out.println("nftproxy run --dry-run: checking this node and configuration; nothing is changed");
        line(out, "config", "ok: " + (cmd.config == null ? "no --config" : "--config " + cmd.config) + ", node "
                + config.hostnameOverride() + (notes == 0 ? "" : ", " + notes + " note(s) logged above"));
        source(config, out);
        nft(config, out);
        daemon(out);
        sysctls(config, out);
        leftovers(out);
        line(out, "result", (exit == ExitCodes.OK ? "ok" : "FAILED (exit " + exit + ")") + "; nothing was changed");
        return exit;
    }

    private void source(ProxyConfig config, PrintWriter out) {
        if (config.manifests() != null) {
            try {
                LoadResult load = new ManifestLoader().load(config.manifests());
                line(out, "source", "ok: --manifests " + config.manifests() + ": " + load.snapshot().services().size()
                        + " Services, " + load.snapshot().endpointSlices().size() + " EndpointSlices"
                        + (load.problems().isEmpty() ? "" : ", " + load.problems().size() + " skipped:"));
                for (var p : load.problems()) line(out, "", p.describe("skipped"));
            } catch (IOException e) {
                fail(out, "source", ExitCodes.INPUT_UNREADABLE, NodeOptions.unreadable(config.manifests(), e));
            }
            return;
        }
        String where = config.kubeconfig() == null ? "in-cluster service account, else ~/.kube/config"
                : "kubeconfig " + config.kubeconfig();
        ApiServer api;
        try {
            api = DaemonLauncher.apiServer(config);
        } catch (IllegalArgumentException e) {
            fail(out, "source", ExitCodes.INPUT_UNREADABLE, e.getMessage());
            return;
        }
        try {
            ApiServer.Failure failure = api.firstContact(FIRST_CONTACT);
            if (failure == null) line(out, "source", "ok: API server " + api.url() + " answered (" + where + ")");
            else fail(out, "source", ExitCodes.API_UNUSABLE, "API server " + api.url() + " unusable: " + failure.detail() + " (" + where + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(out, "source", ExitCodes.API_UNUSABLE, "interrupted while asking API server " + api.url());
        }
    }

    private void nft(ProxyConfig config, PrintWriter out) {
        java.io.StringWriter why = new java.io.StringWriter();
        NftClients.Selection sel = RunCommand.openOrExplain(cmd.clients, config.nftMode(), cmd.netns, new PrintWriter(why, true));
        if (sel == null) {
            fail(out, "nft", ExitCodes.NFT_UNAVAILABLE, why.toString().strip());
            return;
        }
        try (NftClient client = sel.client()) {
            client.capabilities(); // dry runs only (nft -c)
            line(out, "nft", "ok: " + client.describe() + "; " + sel.reason());
        } catch (NftException e) {
            fail(out, "nft", RunCommand.firstCallExit(e), RunCommand.firstCallFailed(e, sel.client().describe()));
        } catch (RuntimeException e) {
            fail(out, "nft", ExitCodes.NFT_UNAVAILABLE, "nft unavailable (" + sel.client().describe() + "): " + e);
        }
    }

    private void daemon(PrintWriter out) {
        try {
            Optional<String> holder = NetnsLock.holder(cmd.netns);
            if (holder.isEmpty()) line(out, "daemon", "ok: none runs in this network namespace");
            // Not a failure: checking a changed configuration before a restart is what this is for.
            else line(out, "daemon", "one runs in this network namespace (" + holder.get() + "); a second would not start "
                    + "beside it: restart it to apply a change (systemctl restart nftproxy)");
        } catch (IOException e) {
            line(out, "daemon", "cannot tell whether one runs here: " + e.getMessage());
        }
    }

    private void sysctls(ProxyConfig config, PrintWriter out) {
        List<ConntrackSysctls.Setting> plan = ConntrackSysctls.plan(config.conntrack(), ConntrackSysctls.cpus());
        if (plan.isEmpty()) {
            line(out, "sysctl", "none to set (every conntrack setting is 0)");
            return;
        }
        try {
            for (ConntrackSysctls.Outcome o : ConntrackSysctls.apply(plan, readOnly(sysctls.apply(cmd.netns)))) {
                line(out, "sysctl", o.status() == ConntrackSysctls.Status.SET
                        ? "would set " + o.setting().name() + "=" + o.setting().value() + " (now " + o.before() + ")" : o.toString());
            }
        } catch (IOException e) {
            fail(out, "sysctl", e instanceof java.nio.file.AccessDeniedException ? ExitCodes.PERMISSION_DENIED : ExitCodes.INPUT_UNREADABLE,
                    e.getMessage());
        }
    }

    private void leftovers(PrintWriter out) {
        OtherModeLeftovers.Outcome o = leftovers.apply(cmd.netns);
        line(out, "leftovers", o.removed().isEmpty() ? "none of kube-proxy's iptables or IPVS modes"
                : "after its first sync the daemon would remove kube-proxy's iptables/IPVS-mode leftovers, " + o.summary());
        o.failures().forEach(f -> line(out, "leftovers", "cannot tell: " + f));
    }

    /** The kernel's sysctls, read as they are; a write is not made, so the outcome says what the start would do. */
    private static ConntrackSysctls.Access readOnly(ConntrackSysctls.Access a) {
        return new ConntrackSysctls.Access() {
            @Override public long read(String name) throws IOException { return a.read(name); }

            @Override public void write(String name, long value) { }

            @Override public boolean writable(String name) throws IOException { return a.writable(name); }
        };
    }

    private void fail(PrintWriter out, String what, int code, String why) {
        if (exit == ExitCodes.OK) exit = code;
        line(out, what, "FAILED: " + why);
    }

    private static void line(PrintWriter out, String what, String text) {
        out.printf("%-10s %s%n", what, text);
    }
}
