package io.nftproxy.bench;

import io.nftproxy.diff.Differ;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.nft.ExecNftClient;
import io.nftproxy.netlink.nft.LibNftablesClient;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.service.Endpoint;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ServicePort;
import io.nftproxy.sync.TableModel;
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
 * an endpoint, change a service's endpoint count, take all its endpoints away and back, remove a service;
 * p50/p99 over {@code changes} of each) through in-process libnftables and through {@code nft -f -}.
 * Each contender gets its own throwaway network namespace, deleted in a finally block. Needs root.
 *
 * <p>Usage: {@code ApplyLatency layouts endpointsPerService changes floorTimeoutSeconds sizes...}, where
 * {@code layouts} is one or more of {@code upstream}, {@code fast}, {@code flat}, comma-separated ({@link TableLayout}); every size runs
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
                 NftClient client = mode.equals("exec") ? ExecNftClient.inNamespace(ns.handle(), Duration.ofSeconds(floorTimeout * 3L))
                         : LibNftablesClient.inNamespace(ns.handle())) {
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

    /** The single changes measured, in the order they are reported. */
    private static final List<String> KINDS = List.of("add service", "move endpoint", "remove endpoint", "add endpoint",
            "no endpoints", "back from none", "remove service");

    /**
     * {@code changes} rounds of: a service added, one endpoint moved to a new address, one endpoint removed and one
     * added back (the endpoint count changes twice), a service losing every endpoint and getting them back; then the
     * services added are removed one by one. Each on its own service, each a sync of its own.
     */
    private static void singleChanges(String tag, int eps, int changes, String mode, NftClient client, BenchCluster cluster,
                                      ProxyState state, TableModel inc) {
        int n = state.servicePorts().size();
        Map<Integer, List<Endpoint>> current = new HashMap<>();
        Map<String, List<Double>> core = new HashMap<>(), apply = new HashMap<>();
        for (String k : KINDS) {
            core.put(k, new ArrayList<>());
            apply.put(k, new ArrayList<>());
        }
        java.util.function.BiConsumer<String, TableModel.Change> time = (k, c) -> timeOne(inc, client, c, core.get(k), apply.get(k));
        for (int i = 0; i < changes; i++) {
            ServicePort added = BenchCluster.service(n + i);
            time.accept("add service", new TableModel.Change(added.name(), added, cluster.endpoints(eps)));

            int victim = (int) ((i * 7919L) % n);
            ServicePort sp = BenchCluster.service(victim);
            List<Endpoint> moved = cluster.moveOne(current.getOrDefault(victim, state.endpointsOf(sp.name())));
            current.put(victim, moved);
            time.accept("move endpoint", new TableModel.Change(sp.name(), sp, moved));

            if (eps > 1) {
                int shrunk = (int) ((i * 7919L + 1) % n);
                ServicePort sh = BenchCluster.service(shrunk);
                List<Endpoint> was = current.getOrDefault(shrunk, state.endpointsOf(sh.name()));
                time.accept("remove endpoint", new TableModel.Change(sh.name(), sh, was.subList(1, was.size())));
                List<Endpoint> back = new ArrayList<>(was.subList(1, was.size()));
                back.addAll(cluster.endpoints(1));
                back = Endpoint.sortedByHostPort(back);
                current.put(shrunk, back);
                time.accept("add endpoint", new TableModel.Change(sh.name(), sh, back));
            }

            int emptied = (int) ((i * 7919L + 2) % n);
            ServicePort em = BenchCluster.service(emptied);
            List<Endpoint> had = current.getOrDefault(emptied, state.endpointsOf(em.name()));
            time.accept("no endpoints", new TableModel.Change(em.name(), em, List.of()));
            time.accept("back from none", new TableModel.Change(em.name(), em, had));
        }
        for (int i = 0; i < changes; i++) {
            ServicePort added = BenchCluster.service(n + i);
            time.accept("remove service", new TableModel.Change(added.name(), null, List.of()));
        }
        for (String k : KINDS) {
            List<Double> c = core.get(k), a = apply.get(k);
            if (c.isEmpty()) continue;
            report("%s %-11s %-15s core p50 %.2f p99 %.2f ms | apply p50 %.2f p99 %.2f max %.2f ms | total p99 %.2f ms%n",
                    tag, mode, k + ":", pct(c, 50), pct(c, 99), pct(a, 50), pct(a, 99), pct(a, 100), pct(sum(c, a), 99));
        }
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
