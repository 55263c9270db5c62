package io.nftproxy.cli;

import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.nft.TableContent;
import io.nftproxy.readback.TableComparison;
import io.nftproxy.nft.UnrecognisedRuleException;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;
import io.nftproxy.trace.Outcome;
import io.nftproxy.trace.Packet;
import io.nftproxy.trace.PacketTracer;
import io.nftproxy.trace.Step;
import io.nftproxy.trace.Trace;
import io.nftproxy.trace.TraceException;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code trace --kernel}: the packet traced through the table the kernel holds, read back from nft, next to the
 * table the cluster implies; when the two send it to different places, what differs, the chains the packet passes
 * first. A stale or hand-edited table is where "the Service is right but traffic goes elsewhere" comes from.
 */
final class KernelTrace {
    /** At most this many differences are listed; the rest are counted. */
    static final int LISTED_DIFFERENCES = 20;

    private KernelTrace() {}

    static int run(NftClients.Mode mode, NetworkNamespace netns, TableContent implied, NodeContext node, Packet packet,
                   OriginChoice origin, PrintWriter out, PrintWriter err) {
        IpFamily family = packet.dst().family();
        String tableName = "table " + family.nftFamily() + " " + TableContent.TABLE_NAME;
        NftClients.Selection selection = RunCommand.openOrExplain(RunCommand.KERNEL, mode, netns, err);
        if (selection == null) return ExitCodes.NFT_UNAVAILABLE;
        TableContent kernel;
        try (NftClient client = selection.client()) {
            kernel = client.readTable(family);
        } catch (NftException e) {
            if (e.isPermission()) {
                err.println("nftproxy: cannot list " + tableName + ": permission denied (needs CAP_NET_ADMIN): " + e.getMessage());
                return ExitCodes.PERMISSION_DENIED;
            }
            err.println("nftproxy: cannot list " + tableName + ": " + e.getMessage());
            return ExitCodes.NFT_UNAVAILABLE;
        } catch (UnrecognisedRuleException | IllegalArgumentException e) {
            err.println("nftproxy: trace --kernel: " + tableName + " holds what nftproxy cannot follow: " + e.getMessage());
            return ExitCodes.UNTRACEABLE;
        }
        Trace want;
        Trace have;
        try {
            want = PacketTracer.trace(implied, node, packet);
            have = kernel == null ? null : PacketTracer.trace(kernel, node, packet);
        } catch (TraceException e) {
            err.println("nftproxy: trace: " + e.getMessage());
            return ExitCodes.UNTRACEABLE;
        }
        out.println(origin.line());
        if (have == null) {
            out.println("kernel: no " + tableName + " in this network namespace: no rule of kube-proxy's touches the packet");
        } else {
            out.println("kernel: " + tableName + " as nft lists it now");
            out.print(have.render());
        }
        String implies = want.outcome().summary();
        if (have != null && sameDestination(want.outcome(), have.outcome())) {
            out.println("cluster: the table the cluster implies sends it the same way (" + implies + ")");
            return ExitCodes.OK;
        }
        out.println("DIFFERS: the cluster implies " + implies + "; the kernel's table "
                + (have == null ? "does not exist" : "gives " + have.outcome().summary()));
        if (kernel != null) differences(implied, kernel, want, have, out);
        return ExitCodes.KERNEL_DIFFERS;
    }

    /**
     * The same place: the same kind of verdict, and for DNAT the same destinations with the same odds and the same
     * masquerading. Rule text is not compared: the kernel spells some rules differently from how they were written.
     */
    static boolean sameDestination(Outcome want, Outcome have) {
        if (want.kind() != have.kind()) return false;
        if (want instanceof Outcome.Dnat w && have instanceof Outcome.Dnat h) {
            return w.hostPorts().equals(h.hostPorts()) && w.masqueradeSummary().equals(h.masqueradeSummary());
        }
        if (want instanceof Outcome.Untouched w && have instanceof Outcome.Untouched h) {
            return w.masquerade().applied() == h.masquerade().applied();
        }
        if (want instanceof Outcome.Mixed) return want.summary().equals(have.summary());
        return true;
    }

    /**
     * The table differences, first those that name a chain either trace passed through or a set or map a rule that
     * held on the way reads: the {@code flat} layout sends a packet through shared sets and data maps (a stale
     * {@code flat-endpoints-tcp-2} element), not through chains of its Service.
     */
    static void differences(TableContent implied, TableContent kernel, Trace want, Trace have, PrintWriter out) {
        List<String> all = TableComparison.diff(implied, kernel, Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED));
        if (all.isEmpty()) {
            out.println("the two tables hold the same objects; the difference is in how the node sees the packet");
            return;
        }
        Set<String> chains = new LinkedHashSet<>();
        for (Trace t : List.of(want, have)) {
            for (Step s : t.allSteps()) {
                if (s.chain() != null) chains.add(s.chain());
                if (s.matched()) chains.addAll(s.setRefs());
            }
        }
        Map<Boolean, List<String>> onPath = all.stream()
                .collect(Collectors.partitioningBy(d -> chains.stream().anyMatch(d::contains)));
        List<String> ordered = new ArrayList<>(onPath.get(true));
        ordered.addAll(onPath.get(false));
        out.println("differences, expected (the cluster) vs. actual (the kernel), " + onPath.get(true).size()
                + " on the packet's path first, " + all.size() + " in all:");
        for (String d : ordered.subList(0, Math.min(LISTED_DIFFERENCES, ordered.size()))) out.println("  " + d);
        if (ordered.size() > LISTED_DIFFERENCES) out.println("  ... and " + (ordered.size() - LISTED_DIFFERENCES) + " more");
    }
}
