package io.nftproxy.bench;

import io.nftproxy.diff.TransactionSplitter;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.nft.LibNftablesClient;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.net.IpFamily;
import io.nftproxy.nft.Transaction;
import io.nftproxy.service.ProxyState;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import io.nftproxy.sync.TableModel;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.nftproxy.bench.ApplyLatency.ms;
import static io.nftproxy.bench.ApplyLatency.pct;
import static io.nftproxy.bench.ApplyLatency.report;

/**
 * A cold start (empty table to full table) cut by {@link TransactionSplitter} at each given command budget, through
 * in-process libnftables, each budget in a fresh network namespace (deleted in a finally block): total time, number
 * of parts, p50 / p99 / max of the per-part apply. A part's apply time includes libnftables' listing of the table
 * before it sends the batch, so it is an upper bound of how long the part holds the kernel's commit lock. Needs root.
 *
 * <p>With {@code -Dbench.probe=true}, another nftables user runs alongside in the same namespace:
 * {@code ip netns exec NS nft add table ip6 nftp-probe} in a loop (a one-command transaction whose libnftables
 * cache is the list of tables only, so the probe never lists, and never re-lists, the big table while it is
 * being written), and its latencies are reported. The commit lock is per namespace, so the probe's worst latency
 * is what a CNI plugin or firewall on the node would wait, plus its own process start.
 *
 * <p>With {@code -Dbench.writeParts=DIR}, nothing is applied: each budget's parts are written to
 * {@code DIR/budget-B/part-NNNN.nft}, for {@code benchmarks/part-sendmsg.sh}, which times the kernel's side.
 *
 * <p>Usage: {@code ColdStartParts layout endpointsPerService services budgets...}; budget 0 means unsplit.
 */
public final class ColdStartParts {
    private ColdStartParts() {}

    public static void main(String[] args) throws Exception {
        TableLayout layout = TableLayout.parse(args[0]);
        int eps = Integer.parseInt(args[1]);
        int n = Integer.parseInt(args[2]);
        List<Integer> budgets = Arrays.stream(args).skip(3).map(Integer::parseInt).toList();
        BenchCluster cluster = new BenchCluster(eps);
        ProxyState state = cluster.state(n);
        TableModel model = new TableModel(new Renderer(layout), IpFamily.IPV4, BenchCluster.node());
        Transaction cold = model.sync(state, BenchCluster.node()).transaction();
        report("# cold start in parts, layout %s, %d services x %d endpoints, %d commands%n", layout.cliName(), n, eps, cold.size());
        for (int budget : budgets) {
            List<Transaction> parts = budget == 0 ? List.of(cold) : TransactionSplitter.split(cold, budget);
            String dir = System.getProperty("bench.writeParts");
            if (dir != null) {
                // For a kernel-side measure without this JVM: each part as an nft -f script, in commit order.
                java.nio.file.Path d = java.nio.file.Files.createDirectories(java.nio.file.Path.of(dir, "budget-" + budget));
                for (int k = 0; k < parts.size(); k++) {
                    java.nio.file.Files.writeString(d.resolve(String.format(java.util.Locale.ROOT, "part-%04d.nft", k + 1)),
                            parts.get(k).script(io.nftproxy.nft.Capabilities.baseline()));
                }
                report("budget %d: %d parts written to %s%n", budget, parts.size(), d);
                continue;
            }
            List<Double> times = new ArrayList<>();
            int slowest = 0;
            try (KernelNamespace ns = KernelNamespace.create("bcs");
                 NftClient client = LibNftablesClient.inNamespace(ns.handle())) {
                Probe probe = Boolean.getBoolean("bench.probe") ? Probe.start(ns) : null;
                long t0 = System.nanoTime();
                for (int k = 0; k < parts.size(); k++) {
                    long s = System.nanoTime();
                    client.apply(parts.get(k));
                    times.add(ms(System.nanoTime() - s));
                    if (times.get(k) > times.get(slowest)) slowest = k;
                }
                long total = System.nanoTime() - t0;
                if (probe != null) {
                    List<Double> p = probe.stop();
                    report("  other nftables user alongside: %d commits, p50 %.1f / p99 %.1f / max %.1f ms%n", p.size(),
                            pct(p, 50), pct(p, 99), p.stream().mapToDouble(Double::doubleValue).max().orElse(0));
                }
                report("budget %s: total %.0f ms, %d parts, per part p50 %.1f / p99 %.1f / max %.1f ms (max at part %d of %d, %d commands)%n",
                        budget == 0 ? "none" : String.valueOf(budget), ms(total), parts.size(), pct(times, 50), pct(times, 99),
                        times.get(slowest), slowest + 1, parts.size(), parts.get(slowest).size());
                if (Boolean.getBoolean("bench.perPart")) {
                    StringBuilder sb = new StringBuilder("  per part ms:");
                    for (double t : times) sb.append(String.format(java.util.Locale.ROOT, " %.0f", t));
                    report("%s%n", sb);
                }
            }
        }
    }

    /** A bounded loop of tiny commits to another table, on its own thread, until stopped (at most 10 minutes). */
    private static final class Probe {
        private final List<Double> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
        private volatile boolean stop;
        private Thread thread;

        static Probe start(KernelNamespace ns) {
            Probe p = new Probe();
            long deadline = System.nanoTime() + 600_000_000_000L;
            p.thread = new Thread(() -> {
                while (!p.stop && System.nanoTime() < deadline) {
                    long s = System.nanoTime();
                    try {
                        KernelNamespace.Result r = ns.exec(java.time.Duration.ofSeconds(60), null, "nft", "add", "table", "ip6", "nftp-probe");
                        if (!r.ok()) throw new IllegalStateException("probe failed: " + r.stderr());
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                    p.latencies.add(ms(System.nanoTime() - s));
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "probe");
            p.thread.start();
            return p;
        }

        List<Double> stop() throws InterruptedException {
            stop = true;
            thread.join();
            return List.copyOf(latencies);
        }
    }
}
