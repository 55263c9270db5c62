package io.nftproxy.bench;

import io.nftproxy.diff.TransactionSplitter;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.nft.LibNftablesClient;
import io.nftproxy.netlink.nft.RulesetGeneration;
import io.nftproxy.net.IpFamily;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.readback.TableComparison;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import io.nftproxy.sync.TableModel;

import java.util.ArrayList;
import java.util.List;

import static io.nftproxy.bench.ApplyLatency.ms;
import static io.nftproxy.bench.ApplyLatency.pct;
import static io.nftproxy.bench.ApplyLatency.report;

/**
 * The two paths of the periodic verification on a full table in a fresh namespace (deleted in a finally block): the
 * generation check the daemon makes when nothing was committed since its last commit (one {@code NFT_MSG_GETGEN},
 * timed over many readings), and the read-back it falls back to otherwise (libnftables' JSON listing, parsed into the
 * model and compared with what was meant), timed per round. Needs root.
 *
 * <p>Usage: {@code VerifyLatency layout endpointsPerService services readBackRounds}.
 */
public final class VerifyLatency {
    private static final int READINGS = 10_000;

    private VerifyLatency() {}

    public static void main(String[] args) throws Exception {
        TableLayout layout = TableLayout.parse(args[0]);
        int eps = Integer.parseInt(args[1]);
        int n = Integer.parseInt(args[2]);
        int rounds = Integer.parseInt(args[3]);
        TableModel model = new TableModel(new Renderer(layout), IpFamily.IPV4, BenchCluster.node());
        Transaction cold = model.sync(new BenchCluster(eps).state(n), BenchCluster.node()).transaction();
        TableContent meant = model.table().table();
        report("# verification, layout %s, %d services x %d endpoints (%d commands), load %s%n", layout.cliName(), n, eps,
                cold.size(), FirstPacketLatency.load());
        try (KernelNamespace ns = KernelNamespace.create("bver");
             LibNftablesClient client = LibNftablesClient.inNamespace(ns.handle());
             RulesetGeneration gen = RulesetGeneration.openIn(ns.handle())) {
            for (Transaction part : TransactionSplitter.split(cold, 5_000)) client.apply(part);
            List<Double> readings = new ArrayList<>(READINGS);
            long g = gen.current();
            for (int i = 0; i < READINGS; i++) {
                long t0 = System.nanoTime();
                long now = gen.current();
                readings.add((System.nanoTime() - t0) / 1e3);
                if (now != g) throw new IllegalStateException("generation moved from " + g + " to " + now + " with nobody committing");
            }
            report("generation path: %d readings, p50 %.0f / p99 %.0f / max %.0f us (load %s)%n", READINGS, pct(readings, 50),
                    pct(readings, 99), readings.stream().mapToDouble(Double::doubleValue).max().orElse(0), FirstPacketLatency.load());
            for (int r = 1; r <= rounds; r++) {
                long t0 = System.nanoTime();
                String json = client.listTableJson(IpFamily.IPV4);
                long t1 = System.nanoTime();
                TableContent kernel = io.nftproxy.readback.KernelTableParser.parse(json);
                long t2 = System.nanoTime();
                // nft 1.0.6 prints no chain comments in JSON (reject-chain's would be the one difference), as the daemon tolerates.
                List<String> differences = TableComparison.diff(meant, kernel, java.util.Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED));
                long t3 = System.nanoTime();
                report("read-back path, round %d: listing %.0f ms (%.1f MB), parse %.0f ms, compare %.0f ms, total %.0f ms, %d differences (load %s)%n",
                        r, ms(t1 - t0), json.length() / 1e6, ms(t2 - t1), ms(t3 - t2), ms(t3 - t0), differences.size(), FirstPacketLatency.load());
                for (String d : differences.subList(0, Math.min(5, differences.size()))) report("  difference: %s%n", d);
            }
        }
    }
}
