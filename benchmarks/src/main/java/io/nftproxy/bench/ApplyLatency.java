package io.nftproxy.bench;

import io.nftproxy.diff.Differ;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.nft.ExecNftClient;
import io.nftproxy.netlink.nft.LibNftablesClient;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.proxy.Endpoint;
import io.nftproxy.net.IpFamily;
import io.nftproxy.proxy.ProxyState;
import io.nftproxy.proxy.ServicePort;
import io.nftproxy.render.TableModel;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * End-to-end apply latency, in one run: for each size, the floor ({@code ip netns exec NS nft -f FILE} of the full
 * script from a shell), then a cold full sync (empty table to full table) and single changes (add a service, move
 * an endpoint; p50/p99 over {@code changes} of each) through in-process libnftables and through {@code nft -f -}.
 * Each contender gets its own throwaway network namespace, deleted in a finally block. Needs root.
 *
 * <p>Usage: {@code ApplyLatency layouts endpointsPerService changes floorTimeoutSeconds sizes...}, where
 * {@code layouts} is {@code upstream}, {@code fast} or both comma-separated ({@link TableLayout}); every size runs
 * in each layout. {@code -Dbench.modes=libnftables} (or {@code exec}) runs one client only. A size whose floor
 * exceeds the timeout is reported as such and its other contenders skipped: a libnftables call cannot be
 * interrupted, and a minutes-long kernel transaction left running would skew every later number.
 */
public final class ApplyLatency {
    private ApplyLatency() {}

    public static void main(String[] args) throws Exception {
        List<TableLayout> layouts = Arrays.stream(args[0].split(",")).map(TableLayout::parse).toList();
        int eps = Integer.parseInt(args[1]);
        int changes = Integer.parseInt(args[2]);
        int floorTimeout = Integer.parseInt(args[3]);
        List<Integer> sizes = Arrays.stream(args).skip(4).map(Integer::parseInt).toList();
        List<String> modes = List.of(System.getProperty("bench.modes", "libnftables,exec").split(","));
        report("# apply latency, layouts %s, %d endpoints per service, %d changes of each kind, floor timeout %d s, clients %s%n",
                layouts, eps, changes, floorTimeout, modes);
        for (int n : sizes) {
            for (TableLayout layout : layouts) runSize(layout, modes, n, eps, changes, floorTimeout);
        }
    }

    private static void runSize(TableLayout layout, List<String> modes, int n, int eps, int changes, int floorTimeout) throws Exception {
        BenchCluster cluster = new BenchCluster(eps);
        ProxyState state = cluster.state(n);
        Renderer renderer = new Renderer(layout);
        long r0 = System.nanoTime();
        TableModel inc = new TableModel(renderer, IpFamily.IPV4, BenchCluster.node());
        Transaction cold = inc.sync(state, BenchCluster.node()).transaction();
        long r1 = System.nanoTime();
        String script = cold.script(Capabilities.baseline());
        long r2 = System.nanoTime();
        String tag = layout.cliName() + " n=" + n + " x " + eps;
        report("%s: render+diff %.0f ms, script %.0f ms (%d commands, %.1f MB)%n", tag, ms(r1 - r0), ms(r2 - r1),
                cold.size(), script.length() / 1e6);

        Path file = Files.createTempFile("nftp-bench-", ".nft");
        try {
            Files.writeString(file, script, StandardCharsets.UTF_8);
            double floor;
            try (KernelNamespace ns = KernelNamespace.create("bfl")) {
                floor = nftFile(ns, file, floorTimeout);
            }
            if (floor < 0) {
                report("%s: floor (ip netns exec NS nft -f FILE) did not finish within %d s; other contenders skipped%n", tag, floorTimeout);
                return;
            }
            report("%s: floor nft -f FILE from a shell: %.0f ms%n", tag, floor);
        } finally {
            Files.deleteIfExists(file);
        }
        for (String mode : modes) {
            try (KernelNamespace ns = KernelNamespace.create(mode.equals("exec") ? "bex" : "blib");
                 NftClient client = mode.equals("exec") ? ExecNftClient.inNamespace(ns.name(), Duration.ofSeconds(floorTimeout * 3L))
                         : LibNftablesClient.inNamespace(ns.name())) {
                client.capabilities();
                long t0 = System.nanoTime();
                client.apply(cold);
                double coldMs = ms(System.nanoTime() - t0);
                report("%s %-11s cold full sync: %.0f ms%n", tag, mode, coldMs);
                singleChanges(tag, eps, changes, mode, client, cluster, state, coldStart(renderer, state));
            }
        }
    }

    /** The same renderer state the cold sync produced, rebuilt so every contender starts from the same model. */
    private static TableModel coldStart(Renderer renderer, ProxyState state) {
        TableModel inc = new TableModel(renderer, IpFamily.IPV4, BenchCluster.node());
        inc.sync(state, BenchCluster.node());
        return inc;
    }

    private static void singleChanges(String tag, int eps, int changes, String mode, NftClient client, BenchCluster cluster,
                                      ProxyState state, TableModel inc) {
        int n = state.servicePorts().size();
        Map<Integer, List<Endpoint>> current = new HashMap<>();
        List<Double> addCore = new ArrayList<>(), addApply = new ArrayList<>();
        List<Double> moveCore = new ArrayList<>(), moveApply = new ArrayList<>();
        for (int i = 0; i < changes; i++) {
            ServicePort added = BenchCluster.service(n + i);
            List<Endpoint> addedEps = cluster.endpoints(eps);
            timeOne(inc, client, new TableModel.Change(added.name(), added, addedEps), addCore, addApply);

            int victim = (int) ((i * 7919L) % n);
            ServicePort sp = BenchCluster.service(victim);
            List<Endpoint> was = current.getOrDefault(victim, state.endpointsOf(sp.name()));
            List<Endpoint> moved = cluster.moveOne(was);
            current.put(victim, moved);
            timeOne(inc, client, new TableModel.Change(sp.name(), sp, moved), moveCore, moveApply);
        }
        report("%s %-11s add service:   core p50 %.2f p99 %.2f ms | apply p50 %.2f p99 %.2f ms | total p99 %.2f ms%n",
                tag, mode, pct(addCore, 50), pct(addCore, 99), pct(addApply, 50), pct(addApply, 99), pct(sum(addCore, addApply), 99));
        report("%s %-11s move endpoint: core p50 %.2f p99 %.2f ms | apply p50 %.2f p99 %.2f ms | total p99 %.2f ms%n",
                tag, mode, pct(moveCore, 50), pct(moveCore, 99), pct(moveApply, 50), pct(moveApply, 99), pct(sum(moveCore, moveApply), 99));
    }

    private static void timeOne(TableModel inc, NftClient client, TableModel.Change c,
                                List<Double> core, List<Double> apply) {
        long t0 = System.nanoTime();
        Differ.Diff d = inc.update(List.of(c));
        long t1 = System.nanoTime();
        client.apply(d.transaction());
        Transaction stale = Differ.deletingChains(IpFamily.IPV4, d.staleChains());
        client.apply(stale);
        long t2 = System.nanoTime();
        core.add(ms(t1 - t0));
        apply.add(ms(t2 - t1));
    }

    private static List<Double> sum(List<Double> a, List<Double> b) {
        List<Double> out = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) out.add(a.get(i) + b.get(i));
        return out;
    }

    static double pct(List<Double> xs, int p) {
        double[] s = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int i = (int) Math.ceil(p / 100.0 * s.length) - 1;
        return s[Math.max(0, Math.min(s.length - 1, i))];
    }

    static double ms(long nanos) { return nanos / 1e6; }

    /** The harness's output is its report; it has no logger on purpose. */
    static void report(String fmt, Object... args) {
        System.out.printf(Locale.ROOT, fmt, args);
        System.out.flush();
    }

    /** Milliseconds for {@code ip netns exec NS nft -f FILE}, or -1 when it overran and was killed. */
    private static double nftFile(KernelNamespace ns, Path file, int timeoutSeconds) throws IOException {
        long t0 = System.nanoTime();
        KernelNamespace.Result r;
        try {
            r = ns.exec(Duration.ofSeconds(timeoutSeconds), null, "nft", "-f", file.toString());
        } catch (IOException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("timed out")) return -1;
            throw e;
        }
        if (!r.ok()) throw new IOException("nft -f failed with exit code " + r.exitCode() + ": " + r.stderr().strip());
        return ms(System.nanoTime() - t0);
    }
}
