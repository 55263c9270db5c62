package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * nftproxy and upstream kube-proxy (nftables mode), side by side against one real kube-apiserver, measured from
 * outside as an operator would: each proxy runs as its own process in a fresh network namespace, reaches the API
 * server through a relay listening on that namespace's loopback (nothing links the namespaces), and is measured by
 * what the kernel holds and what {@code /proc} says. One proxy at a time. Not part of {@code verify}: it runs only
 * when {@code -Dbench.sizes=1000,10000} is given (see benchmarks/side-by-side.sh, which also builds kube-proxy).
 *
 * <p>Per size N (Services of two endpoints, one EndpointSlice each) and proxy: process start to table complete
 * (every Service in {@code service-ips}), CPU until then (own and reaped children, i.e. kube-proxy's nft runs), peak
 * and steady RSS, one endpoint change API write to kernel (p50/p90/max of 20), one Service added, and a restart with
 * the table in place (time to /healthz 200, kernel changes seen by {@code nft monitor}, fewest Services in
 * {@code service-ips} seen by a poller).
 */
class SideBySideBench {
    private static final String NODE = "node-1";
    private static final String NS = "nftp-bench";
    private static final int CHANGES = 20;
    /** The burst whose GC pauses nftproxy's row reports (issue 27: p99 <= 10 ms during 1,000 changes). */
    private static final int BURST = 1_000;

    @Test
    void sideBySide() throws Exception {
        String sizes = System.getProperty("bench.sizes");
        Assumptions.assumeTrue(sizes != null, "a benchmark: run with -Dbench.sizes=1000,10000 (benchmarks/side-by-side.sh)");
        KernelTests.assumeAvailableAnd(ApiServerBinaries.unavailabilityCause());
        Path kubeProxy = Path.of(System.getProperty("bench.kubeProxy", ApiServerBinaries.binDir().resolve("kube-proxy").toString()));
        Path jar = Path.of(System.getProperty("bench.jar", "../proxy-daemon/target/nftproxy.jar")).toAbsolutePath();
        List<String> proxies = Arrays.asList(System.getProperty("bench.proxies", "kube-proxy,nftproxy").split(","));
        boolean classDataWritten = false;
        StringBuilder report = new StringBuilder();
        for (String size : sizes.split(",")) {
            int n = Integer.parseInt(size.strip());
            try (ApiServerProcess api = ApiServerProcess.start(ApiServerBinaries.locateOrBuild(), ApiServerProcess.Options.defaults());
                 KubernetesClient admin = RealApiServerTest.client(api.adminKubeconfig())) {
                populate(api, admin, n);
                for (String p : proxies) {
                    List<String> cmd = p.equals("kube-proxy") ? kubeProxyCommand(kubeProxy) : nftproxyCommand(jar);
                    if (p.equals("nftproxy") && !classDataWritten) {
                        // The launcher writes the class-data archive when the first run of a jar exits (every build
                        // makes a new jar): that run loads every class itself and is no node's usual start.
                        measure(api, admin, p, cmd, n, true);
                        classDataWritten = true;
                    }
                    String line;
                    try {
                        line = measure(api, admin, p, cmd, n, false).line();
                    } catch (AssertionError e) {
                        // One proxy too slow at one size (kube-proxy's endpoint changes at 45k) leaves the others' rows.
                        line = p + " | " + n + " | not measured: " + e.getMessage();
                    } finally {
                        stopStarted();
                    }
                    System.out.println("RESULT " + line);
                    report.append(line).append('\n');
                }
            }
        }
        System.out.println("\nside by side:\n" + Result.HEADER + "\n" + report);
    }

    // ---------------------------------------------------------------- proxies

    private static final int HEALTHZ = 10256;

    private static List<String> kubeProxyCommand(Path binary) {
        return List.of(binary.toString(), "--proxy-mode=nftables", "--kubeconfig=KUBECONFIG", "--hostname-override=" + NODE,
                "--cluster-cidr=10.240.0.0/16", "--healthz-bind-address=127.0.0.1:" + HEALTHZ,
                "--metrics-bind-address=127.0.0.1:10249", "--conntrack-max-per-core=0", "--v=0");
    }

    private static List<String> nftproxyCommand(Path jar) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("bench.launcher", "../nftproxy")).toAbsolutePath().toString()));
        cmd.addAll(List.of("run", "--kubeconfig", "KUBECONFIG", "--hostname-override", NODE, "--cluster-cidr", "10.240.0.0/16",
                "--healthz-bind-address", "127.0.0.1:" + HEALTHZ, "--metrics-bind-address", "127.0.0.1:10249"));
        String layout = System.getProperty("bench.layout", "");
        if (!layout.isEmpty()) cmd.addAll(List.of("--table-layout", layout));
        return cmd;
    }

    record Result(String proxy, int n, long completeMs, double cpuOwn, double cpuChildren, long peakRssMb, long steadyRssMb,
                  int threads, long p50, long p90, long max, long addMs, String gc, long restartHealthyMs, long restartPeakRssMb,
                  long restartChanges, int fewest, int expected) {
        static final String HEADER = "proxy | N | table complete | CPU own + children | peak RSS | steady RSS | threads"
                + " | endpoint change p50/p90/max | add a Service | GC pauses during " + BURST + " changes"
                + " | restart: healthy, peak RSS, kernel changes, fewest services seen";

        String line() {
            return String.format(Locale.ROOT, "%s | %d | %.1f s | %.1f s + %.1f s | %d MB | %d MB | %d | %d / %d / %d ms | %d ms | %s | %.1f s, %d MB, %d, %d of %d",
                    proxy, n, completeMs / 1000.0, cpuOwn, cpuChildren, peakRssMb, steadyRssMb, threads, p50, p90, max, addMs,
                    gc, restartHealthyMs / 1000.0, restartPeakRssMb, restartChanges, fewest, expected);
        }
    }

    /** With {@code warmUp}, only a start to the complete table and a stop: null, nothing measured. */
    private Result measure(ApiServerProcess api, KubernetesClient admin, String name, List<String> template, int n, boolean warmUp) throws Exception {
        try (KernelNamespace node = KernelNamespace.create("bench");
             NetnsThread inNode = NetnsThread.start(node.handle())) {
            node.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
            ServerSocket listener = inNode.call(() -> new ServerSocket(0, 200, InetAddress.getLoopbackAddress()));
            try (ApiRelay relay = new ApiRelay(api.url(), listener)) {
                Path kubeconfig = Files.createTempFile("nftp-bench-", ".kubeconfig");
                Files.writeString(kubeconfig, Files.readString(api.proxyKubeconfig()).replace(api.url().toString(), relay.url().toString()));
                List<String> cmd = template.stream().map(a -> a.replace("KUBECONFIG", kubeconfig.toString())).toList();
                int expected = n;

                boolean strace = Boolean.getBoolean("bench.strace") && name.equals("nftproxy");
                Path straceOut = logFile(name + ".strace");
                Files.deleteIfExists(straceOut);
                List<String> firstCmd = !strace ? cmd : Stream.concat(Stream.of("strace", "-f", "--seccomp-bpf", "-T", "-e", "trace=sendmsg",
                        "-o", straceOut.toString()), cmd.stream()).toList();
                Instant started = Instant.now();
                long t0 = System.nanoTime();
                Process p = start(node, firstCmd, name);
                long completeMs = awaitComplete(node, p, name, expected, t0);
                double[] cpu = cpuSeconds(p.pid());
                if (warmUp) {
                    p.destroy();
                    p.waitFor();
                    Files.deleteIfExists(kubeconfig);
                    node.exec(Duration.ofSeconds(60), null, "nft", "flush", "ruleset");
                    System.out.printf(Locale.ROOT, "warm-up %s | %d | %.1f s (writes the class-data archive; not measured)%n", name, n, completeMs / 1000.0);
                    return null;
                }
                if (name.equals("nftproxy")) printTimeline(logFile(name), started);
                if (strace) printLongestBatches(straceOut);
                Thread.sleep(10_000);
                long steady = rssMb(p.pid(), "VmRSS");
                int threads = threadCount(p);
                if ("start".equals(System.getProperty("bench.phases"))) {
                    long peakAtStart = rssMb(p.pid(), "VmHWM");
                    // strace does not pass SIGTERM on: the daemon under it is stopped itself.
                    p.descendants().forEach(ProcessHandle::destroy);
                    p.destroy();
                    p.waitFor();
                    Files.deleteIfExists(kubeconfig);
                    node.exec(Duration.ofSeconds(60), null, "nft", "flush", "ruleset");
                    return new Result(name, n, completeMs, cpu[0], cpu[1], peakAtStart, steady, threads, -1, -1, -1, -1, "-", -1, -1, -1, -1, expected);
                }

                // Endpoint changes: the second endpoint of service sK moves to a new address.
                List<Long> lat = new ArrayList<>();
                for (int i = 0; i < CHANGES; i++) {
                    int k = (i * 37) % n;
                    String ip = "10.253." + (i / 200) + "." + (i % 200 + 1);
                    List<String> where = endpointsOf(node, admin, "s" + k);
                    long w = System.nanoTime();
                    EndpointSlice moved = DaemonAgainstApiServerTest.slice(NS, "s" + k, "s" + k + "-1", 8080, List.of(endpoint(k, 1), ip));
                    admin.discovery().v1().endpointSlices().inNamespace(NS).resource(moved).update();
                    lat.add(awaitInChain(node, where, ip, Duration.ofSeconds(120), w));
                    Thread.sleep(200);
                }
                lat.sort(null);

                long a0 = System.nanoTime();
                String cip = admin.services().inNamespace(NS).resource(ApiServices.clusterIP(NS, "added-" + name, 80, 8080)).create().getSpec().getClusterIP();
                admin.discovery().v1().endpointSlices().inNamespace(NS).resource(DaemonAgainstApiServerTest.slice(NS, "added-" + name,
                        "added-" + name + "-1", 8080, List.of("10.254.0.1", "10.254.0.2"))).create();
                long addMs = -1;
                for (long d = System.nanoTime() + Duration.ofSeconds(120).toNanos(); System.nanoTime() < d; ) {
                    if (node.exec(Duration.ofSeconds(10), null, "nft", "get", "element", "ip", "kube-proxy", "service-ips",
                            "{ " + cip + " . tcp . 80 }").ok()) {
                        addMs = (System.nanoTime() - a0) / 1_000_000;
                        break;
                    }
                    Thread.sleep(5);
                }
                expected = ServiceIpsMap.count(node);
                long peak = rssMb(p.pid(), "VmHWM");
                // kube-proxy's pauses are the Go runtime's, not logged here: nftproxy's only.
                String gc = name.equals("nftproxy") ? burst(node, admin, n, gcLog(name)) : "-";

                // Restart with the table in place, under a poller and nft monitor.
                Process monitor = new ProcessBuilder("ip", "netns", "exec", node.name(), "nft", "monitor", "tables", "chains", "rules", "sets", "elements")
                        .redirectErrorStream(true).start();
                AtomicLong changes = new AtomicLong();
                AtomicBoolean counting = new AtomicBoolean(false);
                Thread reader = new Thread(() -> {
                    try (var in = new java.io.BufferedReader(new java.io.InputStreamReader(monitor.getInputStream(), StandardCharsets.UTF_8))) {
                        String line;
                        while ((line = in.readLine()) != null) if (counting.get() && !line.isBlank()) changes.incrementAndGet();
                    } catch (IOException ignored) {
                        // monitor ended
                    }
                }, "monitor-reader");
                reader.start();
                AtomicInteger fewest = new AtomicInteger(Integer.MAX_VALUE);
                AtomicBoolean polling = new AtomicBoolean(true);
                Thread poller = new Thread(() -> {
                    long end = System.nanoTime() + Duration.ofMinutes(10).toNanos();
                    while (polling.get() && System.nanoTime() < end) fewest.accumulateAndGet(ServiceIpsMap.count(node), Math::min);
                }, "poller");
                Thread.sleep(500);
                counting.set(true);
                poller.start();
                p.destroy();
                p.waitFor();
                long r0 = System.nanoTime();
                Process again = start(node, cmd, name + "-restarted");
                long healthyMs = -1;
                for (long d = System.nanoTime() + Duration.ofMinutes(10).toNanos(); System.nanoTime() < d && again.isAlive(); ) {
                    if (healthz(inNode) == 200) {
                        healthyMs = (System.nanoTime() - r0) / 1_000_000;
                        break;
                    }
                    Thread.sleep(20);
                }
                Thread.sleep(5_000);
                long restartPeak = again.isAlive() ? rssMb(again.pid(), "VmHWM") : -1;
                polling.set(false);
                poller.join(30_000);
                counting.set(false);
                monitor.destroy();
                again.destroy();
                again.waitFor();
                Files.deleteIfExists(kubeconfig);
                // The next proxy starts from an empty namespace.
                node.exec(Duration.ofSeconds(30), null, "nft", "flush", "ruleset");
                admin.services().inNamespace(NS).withName("added-" + name).delete();
                admin.discovery().v1().endpointSlices().inNamespace(NS).withName("added-" + name + "-1").delete();
                restoreSlices(admin, Math.max(lat.size(), name.equals("nftproxy") ? BURST : 0), n);
                return new Result(name, n, completeMs, cpu[0], cpu[1], peak, steady, threads, lat.get(lat.size() / 2),
                        lat.get((int) Math.ceil(lat.size() * 0.9) - 1), lat.get(lat.size() - 1), addMs, gc, healthyMs, restartPeak,
                        changes.get(), fewest.get(), expected);
            }
        }
    }

    /** Starts {@code cmd} in the node; nftproxy's JVM also logs its collections to {@link #gcLog} (after any caller's flags). */
    private static Process start(KernelNamespace node, List<String> cmd, String log) throws IOException {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", node.name()));
        full.addAll(cmd);
        ProcessBuilder pb = new ProcessBuilder(full).redirectErrorStream(true).redirectOutput(logFile(log).toFile());
        Files.deleteIfExists(gcLog(log));
        pb.environment().merge("NFTPROXY_JAVA_OPTS", "-Xlog:gc:file=" + gcLog(log) + ":uptime", (a, b) -> a + " " + b);
        Process p = pb.start();
        STARTED.add(p);
        return p;
    }

    private static Path gcLog(String log) { return logFile(log + "-gc"); }

    /** Every process {@link #start} started, so that a measurement that fails halfway leaves none running. */
    private static final List<Process> STARTED = new ArrayList<>();

    private static void stopStarted() throws InterruptedException {
        for (Process p : STARTED) {
            p.descendants().forEach(ProcessHandle::destroy);
            p.destroy();
            p.waitFor();
        }
        STARTED.clear();
    }

    private static int threadCount(Process p) {
        String[] tasks = Path.of("/proc", Long.toString(p.pid()), "task").toFile().list();
        return tasks == null ? -1 : tasks.length;
    }

    private static final Pattern GC_PAUSE = Pattern.compile("Pause.* ([0-9.]+)ms$");

    /**
     * {@link #BURST} endpoint changes written one after another (the second endpoint of a Service moves to 10.252.x.y),
     * until the kernel holds every new address; returns the collections the daemon logged meanwhile: "count, p50 /
     * p99 / max ms". The slices are put back by {@link #restoreSlices}.
     */
    private static String burst(KernelNamespace node, KubernetesClient admin, int n, Path gcLog) throws Exception {
        int changes = Math.min(BURST, n);
        int before = Files.exists(gcLog) ? Files.readAllLines(gcLog).size() : 0;
        for (int i = 0; i < Math.min(changes, n); i++) {
            int k = (i * 37) % n;
            admin.discovery().v1().endpointSlices().inNamespace(NS).resource(DaemonAgainstApiServerTest.slice(NS, "s" + k,
                    "s" + k + "-1", 8080, List.of(endpoint(k, 1), "10.252." + (i / 250) + "." + (i % 250 + 1)))).update();
        }
        int seen = 0;
        for (long d = System.nanoTime() + Duration.ofMinutes(5).toNanos(); System.nanoTime() < d && seen < changes; ) {
            Thread.sleep(1_000);
            Matcher m = Pattern.compile("(dnat to |: )10\\.252\\.").matcher(node.nftOut("list", "table", "ip", "kube-proxy"));
            seen = 0;
            while (m.find()) seen++;
        }
        if (seen < changes) throw new AssertionError("only " + seen + " of " + changes + " burst changes reached the kernel");
        List<Double> pauses = new ArrayList<>();
        List<String> lines = Files.readAllLines(gcLog);
        for (String l : lines.subList(Math.min(before, lines.size()), lines.size())) {
            Matcher m = GC_PAUSE.matcher(l);
            if (m.find()) pauses.add(Double.parseDouble(m.group(1)));
        }
        if (pauses.isEmpty()) return "none";
        pauses.sort(null);
        return String.format(Locale.ROOT, "%d, %.1f / %.1f / %.1f ms", pauses.size(), pauses.get((pauses.size() - 1) / 2),
                pauses.get((int) Math.ceil(pauses.size() * 0.99) - 1), pauses.get(pauses.size() - 1));
    }

    private static Path logFile(String name) { return Path.of(System.getProperty("java.io.tmpdir"), "nftp-bench-" + name + ".log"); }

    /**
     * Milliseconds from {@code t0} until every Service is in {@code service-ips}. For nftproxy that is the moment
     * its log says "first sync done" (logged once every part is committed), checked by one count of the map: polling
     * the map itself means an {@code nft} process that lists it whole every 100 ms, which at 45k takes a large part
     * of the 2 cores the daemon is starting on. kube-proxy logs no such line; its map is polled.
     */
    private static long awaitComplete(KernelNamespace node, Process p, String name, int expected, long t0) throws Exception {
        Path log = logFile(name);
        long deadline = System.nanoTime() + Duration.ofMinutes(15).toNanos();
        while (System.nanoTime() < deadline && p.isAlive()) {
            if (name.equals("nftproxy")) {
                if (Files.readString(log, StandardCharsets.UTF_8).contains("first sync done services=")) {
                    long ms = (System.nanoTime() - t0) / 1_000_000;
                    int have = ServiceIpsMap.count(node);
                    if (have < expected) throw new AssertionError(name + " logged its first sync done with " + have + " of " + expected + " Services in service-ips");
                    return ms;
                }
                Thread.sleep(20);
            } else {
                if (ServiceIpsMap.count(node) >= expected) return (System.nanoTime() - t0) / 1_000_000;
                Thread.sleep(100);
            }
        }
        throw new AssertionError(name + " never completed the table; alive=" + p.isAlive());
    }

    private static final Pattern LOG_TIME = Pattern.compile("^time=(\\S+) .*msg=\"?(.*?)\"?$");

    /** The daemon's start-up as its log tells it, each line's offset from the process start: the breakdown's source. */
    private static void printTimeline(Path log, Instant started) throws IOException {
        for (String l : Files.readAllLines(log, StandardCharsets.UTF_8)) {
            Matcher m = LOG_TIME.matcher(l);
            if (!m.matches() || !m.group(2).matches("(listed kind|(converge|rebuild) sync:|first sync done|watching the API|.*(converge|rebuild) sync).*")) continue;
            long at = Duration.between(started, Instant.parse(m.group(1))).toMillis();
            System.out.printf(Locale.ROOT, "timeline %6d ms  %s%n", at, m.group(2));
        }
    }

    private static final Pattern SENDMSG = Pattern.compile("sendmsg\\(.* = (\\d+) <(\\d+\\.\\d+)>$");

    /**
     * The nfnetlink batches of the cold start, from {@code strace -T}: each batch is processed and committed inside
     * one {@code sendmsg}, under the namespace's nftables commit lock, so its duration is how long the daemon held
     * the lock. Calls of under 4 kB (queries, the capability probe) are counted in the maximum but not listed.
     */
    private static void printLongestBatches(Path straceOut) throws IOException {
        List<Double> ms = new ArrayList<>();
        double longestOfAll = 0;
        int calls = 0;
        for (String l : Files.readAllLines(straceOut, StandardCharsets.UTF_8)) {
            Matcher m = SENDMSG.matcher(l);
            if (!m.find()) continue;
            double t = Double.parseDouble(m.group(2)) * 1000;
            calls++;
            longestOfAll = Math.max(longestOfAll, t);
            if (Long.parseLong(m.group(1)) >= 4096) ms.add(t);
        }
        System.out.printf(Locale.ROOT, "sendmsg: %d calls, longest %.0f ms%n", calls, longestOfAll);
        List<Double> sorted = ms.stream().sorted().toList();
        if (sorted.isEmpty()) {
            System.out.println("batches: none seen in " + straceOut);
            return;
        }
        System.out.printf(Locale.ROOT, "batches (sendmsg >= 4 kB, in order, ms): %s%n",
                ms.stream().map(v -> String.format(Locale.ROOT, "%.0f", v)).toList());
        System.out.printf(Locale.ROOT, "batches: %d, sum %.0f ms, p50 %.0f / max %.0f ms%n", sorted.size(),
                sorted.stream().mapToDouble(Double::doubleValue).sum(), sorted.get(sorted.size() / 2), sorted.get(sorted.size() - 1));
    }

    /** utime+stime and cutime+cstime of a process, in seconds (USER_HZ 100). */
    static double[] cpuSeconds(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        double own = (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
        double children = (Long.parseLong(f[13]) + Long.parseLong(f[14])) / 100.0;
        return new double[] {own, children};
    }

    static long rssMb(long pid, String field) throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (l.startsWith(field + ":")) return Long.parseLong(l.replaceAll("\\D", "")) / 1024;
        }
        return -1;
    }

    /**
     * The {@code nft} arguments after the command that print where {@code service}'s endpoints are: its service chain
     * (kube-proxy, nftproxy's {@code fast} and {@code upstream} layouts), or, in nftproxy's {@code flat} layout, which
     * has no chain for a simple service, its two slots in the endpoint map of TCP ports with two endpoints.
     */
    private static List<String> endpointsOf(KernelNamespace node, KubernetesClient admin, String service) throws IOException {
        String suffix = "-" + NS + "/" + service + "/tcp/http";
        for (String l : node.nftOut("list", "chains", "ip").split("\n")) {
            l = l.strip();
            if (l.startsWith("chain service-") && l.contains(suffix + " ")) return List.of("list", "chain", "ip", "kube-proxy", l.substring(6, l.indexOf(' ', 6)));
        }
        String cip = admin.services().inNamespace(NS).withName(service).get().getSpec().getClusterIP();
        return List.of("get", "element", "ip", "kube-proxy", "flat-endpoints-tcp-2", "{ " + cip + " . 80 . 0, " + cip + " . 80 . 1 }");
    }

    private static long awaitInChain(KernelNamespace node, List<String> where, String ip, Duration limit, long since) throws Exception {
        long d = System.nanoTime() + limit.toNanos();
        List<String> cmd = new ArrayList<>(List.of("nft"));
        cmd.addAll(where);
        while (System.nanoTime() < d) {
            KernelNamespace.Result r = node.exec(Duration.ofSeconds(10), null, cmd.toArray(String[]::new));
            if (r.ok() && r.stdout().contains(ip)) return (System.nanoTime() - since) / 1_000_000;
            Thread.sleep(2);
        }
        throw new AssertionError(ip + " never reached " + where);
    }

    private static int healthz(NetnsThread inNode) {
        try {
            return inNode.call(() -> {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), HEALTHZ), 1_000);
                    s.setSoTimeout(2_000);
                    OutputStream o = s.getOutputStream();
                    o.write("GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    o.flush();
                    InputStream in = s.getInputStream();
                    String status = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
                    return Integer.parseInt(status.substring(9, 12));
                }
            });
        } catch (Exception e) {
            return -1;
        }
    }

    // ---------------------------------------------------------------- cluster

    /** Endpoint {@code which} (1 or 2) of service {@code k}: distinct addresses in 10.200-213/16 for up to 437k services, no .0. */
    static String endpoint(int k, int which) {
        int j = k * 2 + which - 1;
        return "10." + (200 + j / 62_500) + "." + (j / 250 % 250 + 1) + "." + (j % 250 + 1);
    }

    private static void populate(ApiServerProcess api, KubernetesClient admin, int n) throws Exception {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).create();
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
        // A node address, as a kubelet reports it: without one kube-proxy waits for it before its first sync.
        admin.nodes().withName(NODE).editStatus(node -> new NodeBuilder(node).editOrNewStatus().addNewAddress().withType("InternalIP")
                .withAddress("192.0.2.10").endAddress().endStatus().build());
        long ms = StoredServices.create(api, admin, NS, n, k -> List.of(endpoint(k, 1), endpoint(k, 2)));
        System.out.printf("populated %d services x 2 endpoints in %d s%n", n, ms / 1000);
    }

    /** Puts the slices the endpoint changes (and the burst) moved back, so the next proxy starts from the same cluster. */
    private static void restoreSlices(KubernetesClient admin, int changes, int n) {
        for (int i = 0; i < Math.min(changes, n); i++) {
            int k = (i * 37) % n;
            admin.discovery().v1().endpointSlices().inNamespace(NS).resource(DaemonAgainstApiServerTest.slice(NS, "s" + k,
                    "s" + k + "-1", 8080, List.of(endpoint(k, 1), endpoint(k, 2)))).update();
        }
    }
}
