package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.it.CliRun;
import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;
import io.nftproxy.nft.TableContent;
import io.nftproxy.readback.KernelTableParser;
import io.nftproxy.readback.TableComparison;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An hour of churn against a real kube-apiserver, measured from outside: the daemon runs as its own process (the
 * checkout's launcher, so the release's JVM flags, plus a GC log) in a throwaway network namespace and reaches the
 * API server through a relay on that namespace's loopback, as in {@link SideBySideBench}. N Services of two
 * endpoints are stored first; then a writer makes {@code soak.rate} changes a second (endpoint moves, a third
 * endpoint added, Services created and deleted), the API server is restarted every {@code soak.restartMinutes},
 * and every {@code soak.sampleSeconds} one CSV row records the daemon's RSS, heap after GC, threads, descriptors,
 * CPU, the GC pauses and syncs of the interval (GC log and {@code /metrics}), the changes pending, the writer's
 * progress and the machine's load. Twice, {@code jcmd GC.run} forces a full collection whose result is the live
 * heap (its pause is reported apart). At the end the writer stops and the kernel's table must equal, as
 * {@link TableComparison} compares them, the table {@code nftproxy render --kubeconfig} makes of the API's final
 * state, loaded into a second namespace and read back the same way.
 *
 * <p>Not part of {@code verify}: it runs only when {@code -Dsoak.services} is given (benchmarks/soak.sh). Output
 * (samples.csv, events.log, gc.log, daemon.log, final-diff.txt, summary.txt) goes to {@code soak.out}.
 */
class SoakBench {
    private static final String NODE = "node-1";
    private static final String NS = "nftp-soak";
    private static final int HEALTHZ = 10256;
    private static final int METRICS = 10249;
    private static final String CLUSTER_CIDR = "10.240.0.0/16";
    /** Churned Services beyond the stored N: created until this many exist, then one deleted per one created. */
    private static final int CHURN_POOL = 20;
    private static final Set<TableComparison.Tolerance> JSON_GAPS = Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED);
    static final String CSV_HEADER = "t_s,load1,rss_mb,heap_after_gc_mb,heap_committed_mb,threads,fds,cpu_s,gc_count,"
            + "gc_pause_max_ms,gc_pause_sum_ms,syncs,sync_mean_ms,sync_p99_le_ms,service_changes_pending,"
            + "endpoint_changes_pending,changes_made,writes_failed,api_up";

    @Test
    void soak() throws Exception {
        String services = System.getProperty("soak.services");
        Assumptions.assumeTrue(services != null, "a benchmark: run with -Dsoak.services=10000 (benchmarks/soak.sh)");
        KernelTests.assumeAvailableAnd(ApiServerBinaries.unavailabilityCause());
        int n = Integer.parseInt(services);
        Duration length = Duration.ofSeconds(Math.round(Double.parseDouble(System.getProperty("soak.minutes", "60")) * 60));
        Duration restartEvery = Duration.ofSeconds(Math.round(Double.parseDouble(System.getProperty("soak.restartMinutes", "10")) * 60));
        double rate = Double.parseDouble(System.getProperty("soak.rate", "5"));
        Duration sampleEvery = Duration.ofSeconds(Long.parseLong(System.getProperty("soak.sampleSeconds", "10")));
        Path out = Path.of(System.getProperty("soak.out", System.getProperty("java.io.tmpdir") + "/nftp-soak")).toAbsolutePath();
        Path launcher = Path.of(System.getProperty("bench.launcher", "../nftproxy")).toAbsolutePath();
        Files.createDirectories(out);
        for (String f : List.of("samples.csv", "events.log", "gc.log", "daemon.log", "summary.txt")) Files.deleteIfExists(out.resolve(f));
        Events events = new Events(out.resolve("events.log"));
        events.log(String.format(Locale.ROOT, "soak: %d services x 2 endpoints, %.1f changes/s for %d s, API server restart every %d s, sample every %d s",
                n, rate, length.toSeconds(), restartEvery.toSeconds(), sampleEvery.toSeconds()));

        try (ApiServerProcess api = ApiServerProcess.start(ApiServerBinaries.locateOrBuild(), ApiServerProcess.Options.defaults());
             KubernetesClient admin = RealApiServerTest.client(api.adminKubeconfig());
             KernelNamespace node = KernelNamespace.create("soak");
             NetnsThread inNode = NetnsThread.start(node.handle())) {
            populate(api, admin, n, events);
            ip(node, "link", "set", "lo", "up");
            // The node's InternalIP on an interface of its own, as on a real node: the daemon's NodePort addresses
            // come from the interfaces, render's from the Node object, and the final comparison needs both to agree.
            // Both ends of the veth pair stay in the node's namespace (this kernel has no dummy driver).
            ip(node, "link", "add", "eth0", "type", "veth", "peer", "name", "eth1");
            ip(node, "addr", "add", "192.0.2.10/24", "dev", "eth0");
            ip(node, "link", "set", "eth0", "up");
            ip(node, "link", "set", "eth1", "up");
            ServerSocket listener = inNode.call(() -> new ServerSocket(0, 200, InetAddress.getLoopbackAddress()));
            try (ApiRelay relay = new ApiRelay(api.url(), listener)) {
                Path kubeconfig = out.resolve("daemon.kubeconfig");
                Files.writeString(kubeconfig, Files.readString(api.proxyKubeconfig()).replace(api.url().toString(), relay.url().toString()));
                List<String> cmd = List.of("ip", "netns", "exec", node.name(), launcher.toString(), "run", "--kubeconfig", kubeconfig.toString(),
                        "--hostname-override", NODE, "--cluster-cidr", CLUSTER_CIDR,
                        "--healthz-bind-address", "127.0.0.1:" + HEALTHZ, "--metrics-bind-address", "127.0.0.1:" + METRICS);
                ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.resolve("daemon.log").toFile());
                // After the launcher's flags (nftproxy-jvm.sh), which switch every log off but warnings: GC events to a file.
                pb.environment().put("NFTPROXY_JAVA_OPTS", "-Xlog:gc:file=" + out.resolve("gc.log") + ":uptime,level,tags");
                pb.environment().put("NFTPROXY_CDS_DIR", out.resolve("cds").toString());
                events.log("daemon: " + String.join(" ", cmd));
                long t0 = System.nanoTime();
                Process daemon = pb.start();
                try {
                    awaitFirstSync(node, daemon, out.resolve("daemon.log"), n);
                    events.log(String.format(Locale.ROOT, "first sync done after %.1f s; daemon pid %d", (System.nanoTime() - t0) / 1e9, daemon.pid()));
                    Summary summary = run(api, admin, node, inNode, daemon, n, length, restartEvery, rate, sampleEvery, out, events);
                    try {
                        compareWithRender(api, node, out, events, summary);
                    } catch (IOException | RuntimeException | AssertionError e) {
                        // The samples stand without it: the summary is written and says why the comparison is missing.
                        summary.failures.add("final comparison not done: " + e);
                        events.log("final comparison not done: " + e);
                    }
                    String text = summary.text();
                    Files.writeString(out.resolve("summary.txt"), text);
                    System.out.println(text);
                    if (!summary.tableMatches) throw new AssertionError("the kernel's table differs from the render of the API's final state: " + out.resolve("summary.txt"));
                } finally {
                    daemon.destroy();
                    if (!daemon.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) daemon.destroyForcibly();
                    events.log("daemon stopped, exit " + (daemon.isAlive() ? "?" : String.valueOf(daemon.exitValue())));
                }
            }
        }
    }

    // ---------------------------------------------------------------- the hour

    private Summary run(ApiServerProcess api, KubernetesClient admin, KernelNamespace node, NetnsThread inNode, Process daemon, int n,
                        Duration length, Duration restartEvery, double rate, Duration sampleEvery, Path out, Events events) throws Exception {
        Summary summary = new Summary(n, length, restartEvery, rate);
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicBoolean apiUp = new AtomicBoolean(true);
        Writer writer = new Writer(admin, n, rate, running, events);
        Sampler sampler = new Sampler(daemon.pid(), out.resolve("gc.log"), inNode);
        sampler.startOfChurn();
        long start = System.nanoTime();
        Thread writing = new Thread(writer, "soak-writer");
        Thread restarting = new Thread(() -> {
            long next = start + restartEvery.toNanos();
            while (running.get()) {
                if (System.nanoTime() < next) {
                    sleep(200);
                    continue;
                }
                next += restartEvery.toNanos();
                long r0 = System.nanoTime();
                try {
                    apiUp.set(false);
                    events.log(String.format(Locale.ROOT, "t=%.0f s: API server restart", (r0 - start) / 1e9));
                    api.restartApiServer();
                    summary.restarts.add((System.nanoTime() - r0) / 1_000_000);
                    events.log(String.format(Locale.ROOT, "t=%.0f s: API server ready again after %d ms", (System.nanoTime() - start) / 1e9,
                            (System.nanoTime() - r0) / 1_000_000));
                } catch (IOException e) {
                    events.log("API server restart failed: " + e);
                    summary.failures.add("API server restart failed: " + e.getMessage());
                } finally {
                    apiUp.set(api.apiServerRunning());
                }
            }
        }, "soak-restarter");
        writing.start();
        restarting.start();
        // Two forced full collections, half a minute before the steady window starts and before the churn ends: their
        // "after" is the live heap, which a young collection's "after" is not (it includes the old generation's garbage).
        List<Long> forceAt = new ArrayList<>(List.of(Math.round(summary.steadyFrom()) - 30, length.toSeconds() - 30));
        try (BufferedWriter csv = Files.newBufferedWriter(out.resolve("samples.csv"), StandardCharsets.UTF_8)) {
            csv.write(CSV_HEADER);
            csv.newLine();
            long end = start + length.toNanos();
            for (long next = start + sampleEvery.toNanos(); ; next += sampleEvery.toNanos()) {
                long wait = next - System.nanoTime();
                if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                if (!forceAt.isEmpty() && (System.nanoTime() - start) / 1e9 >= forceAt.get(0) && daemon.isAlive()) {
                    forceAt.remove(0);
                    KernelNamespace.Result r = KernelNamespace.run(Duration.ofSeconds(60), null, "jcmd", String.valueOf(daemon.pid()), "GC.run");
                    events.log(String.format(Locale.ROOT, "t=%.0f s: jcmd GC.run (a full collection, for the live heap): %s",
                            (System.nanoTime() - start) / 1e9, r.ok() ? "done" : "failed: " + r.stdout() + r.stderr()));
                }
                if (!daemon.isAlive()) {
                    summary.failures.add(String.format(Locale.ROOT, "the daemon exited with code %d at t=%.0f s", daemon.exitValue(), (System.nanoTime() - start) / 1e9));
                    events.log(summary.failures.get(summary.failures.size() - 1));
                    break;
                }
                Sample s = sampler.sample((System.nanoTime() - start) / 1e9, writer.made.get(), writer.failed.get(), apiUp.get());
                summary.add(s);
                csv.write(s.csv());
                csv.newLine();
                csv.flush();
                if (next >= end) break;
            }
        } finally {
            running.set(false);
            writing.join(120_000);
            restarting.join(180_000);
        }
        summary.pauses.addAll(sampler.pauses);
        summary.startPauses.addAll(sampler.startPauses);
        summary.forced.addAll(sampler.forced);
        summary.changesMade = writer.made.get();
        summary.writesFailed = writer.failed.get();
        summary.kinds = writer.kinds();
        if (!api.apiServerRunning()) api.startApiServer();
        // The last changes reach the kernel within a sync or two; pending must read 0 before the table is compared.
        long settle = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (daemon.isAlive() && System.nanoTime() < settle) {
            Map<String, Double> m = sampler.metrics();
            if (m.getOrDefault("kubeproxy_sync_proxy_rules_service_changes_pending", -1.0) == 0
                    && m.getOrDefault("kubeproxy_sync_proxy_rules_endpoint_changes_pending", -1.0) == 0) break;
            Thread.sleep(500);
        }
        Thread.sleep(5_000);
        summary.daemonAliveAtEnd = daemon.isAlive();
        return summary;
    }

    /**
     * The kernel's table (both families) against the render of the API's final state, loaded into a second throwaway
     * namespace so both sides are read back by the same parser. Tried again after a pause if it differs, since a
     * change written last may still be on its way; the verdict is the last try's.
     */
    private static void compareWithRender(ApiServerProcess api, KernelNamespace node, Path out, Events events, Summary summary) throws Exception {
        for (int attempt = 1; attempt <= 3; attempt++) {
            CliRun render = CliRun.of("render", "--kubeconfig", api.proxyKubeconfig().toString(), "--hostname-override", NODE,
                    "--cluster-cidr", CLUSTER_CIDR);
            if (render.exit() != 0) throw new AssertionError("render --kubeconfig failed: " + render.err());
            List<String> diff = new ArrayList<>();
            try (KernelNamespace ref = KernelNamespace.create("soakref")) {
                ref.load(render.out());
                for (IpFamily f : IpFamily.values()) {
                    TableContent expected = KernelTableParser.parse(ref.listTable(f));
                    TableContent actual = KernelTableParser.parse(node.listTable(f));
                    for (String d : TableComparison.diff(expected, actual, JSON_GAPS)) diff.add(f + ": " + d);
                    summary.comparedRules += expected.ruleCount();
                    summary.comparedElements.put(f, expected.elements("service-ips").size());
                }
            }
            Files.writeString(out.resolve("final-diff.txt"), String.join("\n", diff) + "\n");
            events.log("final comparison " + attempt + ": " + diff.size() + " differences" + (diff.isEmpty() ? "" : ", first: " + diff.get(0)));
            summary.tableMatches = diff.isEmpty();
            summary.differences = diff.size();
            if (diff.isEmpty()) return;
            if (attempt < 3) summary.comparedRules = 0;
            Thread.sleep(30_000);
        }
    }

    // ---------------------------------------------------------------- churn

    /**
     * One change per tick at {@code rate} a second, in a cycle of five: three endpoint moves (the second endpoint of
     * a stored Service gets a fresh address), one slice grown to three endpoints, one Service created or deleted
     * (with its slice). A change that fails (the API server is restarting) is tried again at the next tick, so the
     * writer never runs faster than the rate and never loses a change; the ticks spent retrying are counted.
     */
    private static final class Writer implements Runnable {
        private final KubernetesClient admin;
        private final int n;
        private final double rate;
        private final AtomicBoolean running;
        private final Events events;
        final AtomicLong made = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        private final long[] byKind = new long[4];
        private final Deque<String> churned = new ArrayDeque<>();
        private int nextAddress;
        private int nextService;
        private long tick;

        Writer(KubernetesClient admin, int n, double rate, AtomicBoolean running, Events events) {
            this.admin = admin;
            this.n = n;
            this.rate = rate;
            this.running = running;
            this.events = events;
        }

        String kinds() {
            return String.format(Locale.ROOT, "%d endpoint moves, %d slices grown to 3 endpoints, %d Services created, %d Services deleted",
                    byKind[0], byKind[1], byKind[2], byKind[3]);
        }

        @Override
        public void run() {
            long period = Math.round(1e9 / rate);
            long next = System.nanoTime();
            Runnable pending = null;
            int pendingKind = -1;
            String lastError = null;
            while (running.get()) {
                next += period;
                long wait = next - System.nanoTime();
                if (wait > 0) sleep(wait / 1_000_000);
                else next = System.nanoTime(); // behind (a slow write): no burst to catch up
                if (pending == null) {
                    pendingKind = nextKind();
                    pending = change(pendingKind);
                }
                try {
                    pending.run();
                    made.incrementAndGet();
                    byKind[pendingKind]++;
                    pending = null;
                    if (lastError != null) events.log("writes succeed again");
                    lastError = null;
                } catch (RuntimeException e) {
                    failed.incrementAndGet();
                    String what = e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).lines().findFirst().orElse("");
                    if (lastError == null) events.log("write failed (retried at the next tick): " + what);
                    lastError = what;
                }
            }
        }

        private int nextKind() {
            int slot = (int) (tick++ % 5);
            if (slot < 3) return 0;
            if (slot == 3) return 1;
            return churned.size() < CHURN_POOL || churned.isEmpty() ? 2 : 3;
        }

        private Runnable change(int kind) {
            switch (kind) {
                case 0, 1 -> {
                    int k = (int) Math.floorMod(tick * 7919L, (long) n);
                    List<String> addrs = new ArrayList<>(List.of(endpoint(k, 1), kind == 0 ? fresh() : endpoint(k, 2)));
                    if (kind == 1) addrs.add(fresh());
                    return () -> admin.discovery().v1().endpointSlices().inNamespace(NS)
                            .resource(DaemonAgainstApiServerTest.slice(NS, "s" + k, "s" + k + "-1", 8080, addrs)).update();
                }
                case 2 -> {
                    String name = "c" + nextService++;
                    List<String> addrs = List.of(fresh(), fresh());
                    churned.addLast(name);
                    return () -> {
                        admin.services().inNamespace(NS).resource(ApiServices.clusterIP(NS, name, 80, 8080)).createOr(NonDeletingOperation::update);
                        admin.discovery().v1().endpointSlices().inNamespace(NS)
                                .resource(DaemonAgainstApiServerTest.slice(NS, name, name + "-1", 8080, addrs)).createOr(NonDeletingOperation::update);
                    };
                }
                default -> {
                    String name = churned.removeFirst();
                    return () -> {
                        admin.discovery().v1().endpointSlices().inNamespace(NS).withName(name + "-1").delete();
                        admin.services().inNamespace(NS).withName(name).delete();
                    };
                }
            }
        }

        /** A new endpoint address in 10.216.0.0/13 (10.216-223), never .0, distinct for 3.8 million changes. */
        private String fresh() {
            int j = nextAddress++;
            return "10." + (216 + j / 62_500 % 8) + "." + (j / 250 % 250 + 1) + "." + (j % 250 + 1);
        }
    }

    /** Endpoint {@code which} (1 or 2) of stored Service {@code k}: 10.200-213/16, no .0 (as in {@link SideBySideBench}). */
    private static String endpoint(int k, int which) {
        int j = k * 2 + which - 1;
        return "10." + (200 + j / 62_500) + "." + (j / 250 % 250 + 1) + "." + (j % 250 + 1);
    }

    // ---------------------------------------------------------------- samples

    record Sample(double t, double load1, double rssMb, double heapAfterGcMb, double heapCommittedMb, int threads, int fds,
                  double cpuS, int gcCount, double gcMaxMs, double gcSumMs, long syncs, double syncMeanMs, double syncP99LeMs,
                  double servicePending, double endpointPending, long changes, long writesFailed, boolean apiUp) {
        String csv() {
            return String.format(Locale.ROOT, "%.1f,%.2f,%.1f,%.1f,%.1f,%d,%d,%.2f,%d,%.3f,%.3f,%d,%.1f,%.0f,%.0f,%.0f,%d,%d,%d",
                    t, load1, rssMb, heapAfterGcMb, heapCommittedMb, threads, fds, cpuS, gcCount, gcMaxMs, gcSumMs, syncs, syncMeanMs,
                    syncP99LeMs, servicePending, endpointPending, changes, writesFailed, apiUp ? 1 : 0);
        }
    }

    /** Reads {@code /proc}, the new lines of the GC log and {@code /metrics} once per call; keeps what it needs between calls. */
    private static final class Sampler {
        private static final Pattern PAUSE = Pattern.compile("Pause (Young|Full) \\((.*)\\) (\\d+)M->(\\d+)M\\((\\d+)M\\) ([0-9.]+)ms$");
        private static final String SYNC = "kubeproxy_sync_proxy_rules_duration_seconds";
        private final long pid;
        private final Path gcLog;
        private final NetnsThread inNode;
        private long gcOffset;
        private double heapAfter = Double.NaN;
        private double heapCommitted = Double.NaN;
        private Map<String, Double> lastMetrics = Map.of();
        /** Each pause of the churn: the sample time it was read at, and its milliseconds. */
        final List<double[]> pauses = new ArrayList<>();
        final List<Double> startPauses = new ArrayList<>();
        /** The forced full collections: sample time, heap after (MB), pause (ms). */
        final List<double[]> forced = new ArrayList<>();

        Sampler(long pid, Path gcLog, NetnsThread inNode) {
            this.pid = pid;
            this.gcLog = gcLog;
            this.inNode = inNode;
        }

        Sample sample(double t, long changes, long failed, boolean apiUp) throws IOException {
            Map<String, String> status = new HashMap<>();
            for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                int c = l.indexOf(':');
                if (c > 0) status.put(l.substring(0, c), l.substring(c + 1).strip());
            }
            double rss = Long.parseLong(status.get("VmRSS").replaceAll("\\D", "")) / 1024.0;
            int threads = Integer.parseInt(status.get("Threads"));
            String[] fds = new java.io.File("/proc/" + pid + "/fd").list();
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            double cpu = (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
            double load1 = Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);

            int gcs = 0;
            double max = 0, sum = 0;
            for (String l : newGcLines()) {
                Matcher m = PAUSE.matcher(l);
                if (!m.find()) continue;
                double ms = Double.parseDouble(m.group(6));
                heapAfter = Double.parseDouble(m.group(4));
                heapCommitted = Double.parseDouble(m.group(5));
                if (m.group(2).equals("Diagnostic Command")) {
                    // Ours (jcmd GC.run): the live heap, not a pause the daemon's work caused.
                    forced.add(new double[] {t, heapAfter, ms});
                    continue;
                }
                gcs++;
                sum += ms;
                max = Math.max(max, ms);
                pauses.add(new double[] {t, ms});
            }

            Map<String, Double> m = metrics();
            double count = m.getOrDefault(SYNC + "_count", Double.NaN) - lastMetrics.getOrDefault(SYNC + "_count", 0.0);
            double seconds = m.getOrDefault(SYNC + "_sum", Double.NaN) - lastMetrics.getOrDefault(SYNC + "_sum", 0.0);
            double p99 = Double.NaN;
            if (count > 0) {
                // The smallest bucket bound holding 99 % of this interval's syncs.
                List<Map.Entry<Double, Double>> buckets = new ArrayList<>();
                for (Map.Entry<String, Double> e : m.entrySet()) {
                    if (!e.getKey().startsWith(SYNC + "_bucket{le=\"")) continue;
                    String le = e.getKey().substring(e.getKey().indexOf('"') + 1, e.getKey().lastIndexOf('"'));
                    double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
                    buckets.add(Map.entry(bound, e.getValue() - lastMetrics.getOrDefault(e.getKey(), 0.0)));
                }
                buckets.sort(Map.Entry.comparingByKey());
                for (Map.Entry<Double, Double> b : buckets) {
                    if (b.getValue() >= 0.99 * count) {
                        p99 = b.getKey() * 1000;
                        break;
                    }
                }
            }
            if (!m.isEmpty()) lastMetrics = m;
            return new Sample(t, load1, rss, heapAfter, heapCommitted, threads, fds == null ? -1 : fds.length, cpu, gcs, max, sum,
                    Double.isNaN(count) ? -1 : Math.round(count), count > 0 ? seconds / count * 1000 : Double.NaN, p99,
                    m.getOrDefault("kubeproxy_sync_proxy_rules_service_changes_pending", Double.NaN),
                    m.getOrDefault("kubeproxy_sync_proxy_rules_endpoint_changes_pending", Double.NaN), changes, failed, apiUp);
        }

        /** Takes the pauses logged until now (the start and first sync) out of the churn's. */
        void startOfChurn() throws IOException {
            for (String l : newGcLines()) {
                Matcher m = PAUSE.matcher(l);
                if (m.find()) startPauses.add(Double.parseDouble(m.group(6)));
            }
            lastMetrics = metrics();
        }

        private List<String> newGcLines() throws IOException {
            if (!Files.exists(gcLog)) return List.of();
            try (RandomAccessFile r = new RandomAccessFile(gcLog.toFile(), "r")) {
                if (r.length() <= gcOffset) return List.of();
                byte[] b = new byte[(int) (r.length() - gcOffset)];
                r.seek(gcOffset);
                r.readFully(b);
                String text = new String(b, StandardCharsets.UTF_8);
                int lastNewline = text.lastIndexOf('\n');
                if (lastNewline < 0) return List.of();
                gcOffset += text.substring(0, lastNewline + 1).getBytes(StandardCharsets.UTF_8).length;
                return text.substring(0, lastNewline).lines().toList();
            }
        }

        private static final Pattern SAMPLE_LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)$");
        private static final Pattern LE = Pattern.compile("le=\"([^\"]*)\"");

        /**
         * The daemon's {@code /metrics}, summed over the IP families: a sample's name, or for a histogram bucket
         * {@code name{le="bound"}}, to its value; empty if the daemon did not answer.
         */
        Map<String, Double> metrics() {
            Map<String, Double> values = new HashMap<>();
            try {
                String body = inNode.call(() -> get(METRICS, "/metrics"));
                for (String l : body.split("\n")) {
                    if (l.isBlank() || l.startsWith("#")) continue;
                    Matcher m = SAMPLE_LINE.matcher(l);
                    if (!m.matches()) continue;
                    String key = m.group(1);
                    if (key.endsWith("_bucket") && m.group(2) != null) {
                        Matcher le = LE.matcher(m.group(2));
                        if (le.find()) key += "{le=\"" + le.group(1) + "\"}";
                    }
                    try {
                        values.merge(key, Double.parseDouble(m.group(3)), Double::sum);
                    } catch (NumberFormatException ignored) {
                        // not a number (NaN is parsed; anything else is not a sample)
                    }
                }
            } catch (Exception e) {
                return Map.of();
            }
            return values;
        }
    }

    private static String get(int port, String path) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2_000);
            s.setSoTimeout(5_000);
            OutputStream o = s.getOutputStream();
            o.write(("GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            o.flush();
            InputStream in = s.getInputStream();
            String all = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            int body = all.indexOf("\r\n\r\n");
            return body < 0 ? "" : all.substring(body + 4);
        }
    }

    // ---------------------------------------------------------------- results

    private static final class Summary {
        final int n;
        final Duration length;
        final Duration restartEvery;
        final double rate;
        final List<Sample> samples = new ArrayList<>();
        final List<double[]> pauses = new ArrayList<>();
        final List<Double> startPauses = new ArrayList<>();
        final List<double[]> forced = new ArrayList<>();
        final List<Long> restarts = new ArrayList<>();
        final List<String> failures = new ArrayList<>();
        final Map<IpFamily, Integer> comparedElements = new HashMap<>();
        long changesMade;
        long writesFailed;
        String kinds = "";
        boolean daemonAliveAtEnd;
        boolean tableMatches;
        int differences;
        long comparedRules;

        Summary(int n, Duration length, Duration restartEvery, double rate) {
            this.n = n;
            this.length = length;
            this.restartEvery = restartEvery;
            this.rate = rate;
        }

        void add(Sample s) { samples.add(s); }

        /** Minute 10 onwards (or the later five sixths of a shorter run): past the start and the first restart. */
        double steadyFrom() { return Math.min(600, length.toSeconds() / 6.0); }

        String text() {
            StringBuilder b = new StringBuilder();
            double minutes = length.toSeconds() / 60.0;
            b.append(String.format(Locale.ROOT, "SOAK %d services x 2 endpoints, %.0f changes/s target, %.1f min, API server restart every %.1f min%n",
                    n, rate, minutes, restartEvery.toSeconds() / 60.0));
            b.append(String.format(Locale.ROOT, "SOAK changes made %d (%.2f/s), write attempts failed %d (API server restarting); %s%n",
                    changesMade, changesMade / (double) length.toSeconds(), writesFailed, kinds));
            b.append(String.format(Locale.ROOT, "SOAK API server restarts %d, each down->ready %s ms%n", restarts.size(), restarts));
            if (samples.isEmpty()) return b.append("SOAK no samples\n").toString();
            double from = steadyFrom();
            List<Sample> steady = samples.stream().filter(s -> s.t() >= from).toList();
            if (steady.size() < 2) steady = samples;
            Sample first = steady.get(0), last = steady.get(steady.size() - 1);
            double hours = (last.t() - first.t()) / 3600;
            double rssSlope = slope(steady, Sample::rssMb);
            double rssAtFrom = mean(steady.subList(0, Math.min(6, steady.size())), Sample::rssMb);
            double rssAtEnd = mean(steady.subList(Math.max(0, steady.size() - 6), steady.size()), Sample::rssMb);
            b.append(String.format(Locale.ROOT, "SOAK RSS from t=%.0f s: %.1f MB (mean of the first minute) -> %.1f MB (mean of the last minute), %+.2f %%; "
                            + "least-squares slope %+.2f MB/h (%+.2f %% over the window); min %.1f, max %.1f MB [target: <= +5 %%]%n",
                    from, rssAtFrom, rssAtEnd, 100 * (rssAtEnd - rssAtFrom) / rssAtFrom, rssSlope, 100 * rssSlope * hours / rssAtFrom,
                    min(steady, Sample::rssMb), max(steady, Sample::rssMb)));
            b.append(String.format(Locale.ROOT, "SOAK heap after GC from t=%.0f s: slope %+.2f MB/h, min %.1f, max %.1f MB; committed max %.1f MB%n",
                    from, slope(steady, Sample::heapAfterGcMb), min(steady, Sample::heapAfterGcMb), max(steady, Sample::heapAfterGcMb),
                    max(samples, Sample::heapCommittedMb)));
            for (double[] f : forced) {
                b.append(String.format(Locale.ROOT, "SOAK live heap (after a forced full collection, read at t=%.0f s): %.0f MB, that pause %.1f ms (not counted below)%n",
                        f[0], f[1], f[2]));
            }
            b.append(String.format(Locale.ROOT, "SOAK threads from t=%.0f s: min %.0f, max %.0f, slope %+.2f/h; descriptors: min %.0f, max %.0f, slope %+.2f/h [target: flat]%n",
                    from, min(steady, s -> s.threads()), max(steady, s -> s.threads()), slope(steady, s -> s.threads()),
                    min(steady, s -> s.fds()), max(steady, s -> s.fds()), slope(steady, s -> s.fds())));
            b.append(String.format(Locale.ROOT, "SOAK GC pauses of the start and first sync (not counted below): %d, max %.2f ms%n",
                    startPauses.size(), startPauses.stream().mapToDouble(Double::doubleValue).max().orElse(0)));
            pauseLine(b, "during the churn", pauses.stream().map(x -> x[1]).sorted().toList());
            pauseLine(b, "from t=" + Math.round(from) + " s", pauses.stream().filter(x -> x[0] >= from).map(x -> x[1]).sorted().toList());
            long syncs = samples.stream().mapToLong(s -> Math.max(0, s.syncs())).sum();
            b.append(String.format(Locale.ROOT, "SOAK syncs %d; per-interval mean duration: median %.1f ms, max %.1f ms; largest per-interval p99 bucket bound %.0f ms%n",
                    syncs, pct(samples.stream().map(Sample::syncMeanMs).filter(v -> !v.isNaN()).sorted().toList(), 50),
                    max(samples, Sample::syncMeanMs), max(samples, Sample::syncP99LeMs)));
            b.append(String.format(Locale.ROOT, "SOAK changes pending: max service %.0f, max endpoint %.0f; CPU %.1f s over %.0f s; load1 mean %.2f, max %.2f%n",
                    max(samples, Sample::servicePending), max(samples, Sample::endpointPending), last.cpuS() - samples.get(0).cpuS(),
                    last.t() - samples.get(0).t(), mean(samples, Sample::load1), max(samples, Sample::load1)));
            b.append(String.format(Locale.ROOT, "SOAK final table: %s (%d differences; %d rules compared; service-ips elements %s); daemon alive at the end: %s [target: every change applied]%n",
                    tableMatches ? "kernel EQUALS the render of the API's final state" : "kernel DIFFERS from the render", differences,
                    comparedRules, comparedElements, daemonAliveAtEnd));
            for (String f : failures) b.append("SOAK failure: ").append(f).append('\n');
            return b.toString();
        }

        private static void pauseLine(StringBuilder b, String when, List<Double> p) {
            if (p.isEmpty()) {
                b.append("SOAK GC pauses ").append(when).append(": none\n");
                return;
            }
            b.append(String.format(Locale.ROOT, "SOAK GC pauses %s: %d, p50 %.2f ms, p99 %.2f ms, max %.2f ms, over 10 ms: %d, total %.0f ms [target: p99 <= 10 ms]%n",
                    when, p.size(), pct(p, 50), pct(p, 99), p.get(p.size() - 1), p.stream().filter(v -> v > 10).count(),
                    p.stream().mapToDouble(Double::doubleValue).sum()));
        }

        private interface Field {
            double of(Sample s);
        }

        private static double slope(List<Sample> ss, Field f) {
            // Least squares, per hour.
            double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
            for (Sample s : ss) {
                double y = f.of(s);
                if (Double.isNaN(y)) continue;
                double x = s.t() / 3600;
                n++;
                sx += x;
                sy += y;
                sxx += x * x;
                sxy += x * y;
            }
            double d = n * sxx - sx * sx;
            return n < 2 || d == 0 ? Double.NaN : (n * sxy - sx * sy) / d;
        }

        private static double mean(List<Sample> ss, Field f) {
            return ss.stream().mapToDouble(f::of).filter(v -> !Double.isNaN(v)).average().orElse(Double.NaN);
        }

        private static double min(List<Sample> ss, Field f) {
            return ss.stream().mapToDouble(f::of).filter(v -> !Double.isNaN(v)).min().orElse(Double.NaN);
        }

        private static double max(List<Sample> ss, Field f) {
            return ss.stream().mapToDouble(f::of).filter(v -> !Double.isNaN(v)).max().orElse(Double.NaN);
        }

        private static double pct(List<Double> sorted, int p) {
            if (sorted.isEmpty()) return Double.NaN;
            return sorted.get(Math.max(0, (int) Math.ceil(sorted.size() * p / 100.0) - 1));
        }
    }

    private static final class Events {
        private final Path file;

        Events(Path file) { this.file = file; }

        synchronized void log(String line) {
            String l = Instant.now() + " " + line;
            System.out.println("soak: " + l);
            try {
                Files.writeString(file, l + "\n", StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
                        java.nio.file.StandardOpenOption.APPEND);
            } catch (IOException e) {
                System.out.println("soak: cannot write " + file + ": " + e);
            }
        }
    }

    // ---------------------------------------------------------------- setup

    private static void populate(ApiServerProcess api, KubernetesClient admin, int n, Events events) throws Exception {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).create();
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
        admin.nodes().withName(NODE).editStatus(node -> new NodeBuilder(node).editOrNewStatus().addNewAddress().withType("InternalIP")
                .withAddress("192.0.2.10").endAddress().endStatus().build());
        long ms = StoredServices.create(api, admin, NS, n, k -> List.of(endpoint(k, 1), endpoint(k, 2)));
        events.log(String.format(Locale.ROOT, "populated %d services x 2 endpoints in %d s", n, ms / 1000));
    }

    private static void awaitFirstSync(KernelNamespace node, Process p, Path log, int expected) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(15).toNanos();
        while (System.nanoTime() < deadline && p.isAlive()) {
            if (Files.readString(log, StandardCharsets.UTF_8).contains("first sync done services=")) {
                int have = ServiceIpsMap.count(node);
                if (have < expected) throw new AssertionError("first sync done with " + have + " of " + expected + " Services in service-ips");
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no first sync; alive=" + p.isAlive() + "; log:\n" + Files.readString(log, StandardCharsets.UTF_8));
    }

    private static void ip(KernelNamespace node, String... args) throws IOException {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "ip";
        System.arraycopy(args, 0, cmd, 1, args.length);
        KernelNamespace.Result r = node.exec(Duration.ofSeconds(10), null, cmd);
        if (!r.ok()) throw new IOException(String.join(" ", cmd) + " in " + node.name() + ": " + r.stderr());
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(Math.max(0, ms));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
