package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.source.ClusterStore;
import io.nftproxy.source.KubernetesSource;
import io.nftproxy.source.api.ApiServer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A fleet's load on one real kube-apiserver (issue 27): N simulated nodes, each with its own node name, credentials
 * and connections, keeping Services, EndpointSlices, ServiceCIDRs and their Node in step, and nothing else (no table
 * programming). Two sides, one after the other against the same API server and cluster: nftproxy's own API source
 * ({@link KubernetesSource}, N of them in this JVM, as the daemon starts it: lag probe included), and N client-go
 * clientsets in one Go process doing what kube-proxy v1.36.3's informers do (benchmarks/fleet-client-go).
 *
 * <p>Per side and phase (the N nodes' first lists; 1,000 endpoint changes fanned out to them; an idle minute; all N
 * restarting together): requests, counted from the API server's audit log (the proxy user's requests only, one line
 * each as it arrives, with the exact URI); bytes on the wire both ways, counted by the {@link ApiRelay} every node
 * connects through (TLS records included); the API server's CPU from /proc; and its peak RSS (VmHWM), the API server
 * being restarted (same etcd) before each side so that each side's peak is its own. The admin's writes go to the API
 * server directly, so they are in its CPU but not in the requests or bytes. Not part of {@code verify}: it runs only
 * with {@code -Dfleet.nodes=N} (benchmarks/fleet.sh).
 */
class FleetBench {
    private static final String NS = "nftp-fleet";
    private static final String NODE_PREFIX = "fleet-";
    private static final Duration SYNC_LIMIT = Duration.ofMinutes(10);
    private static final Pattern VERB = Pattern.compile("\"verb\":\"([a-z]+)\"");
    private static final Pattern URI = Pattern.compile("\"requestURI\":\"([^\"]*)\"");

    @Test
    void fleet() throws Exception {
        String nodesProperty = System.getProperty("fleet.nodes");
        Assumptions.assumeTrue(nodesProperty != null, "a benchmark: run with -Dfleet.nodes=100 (benchmarks/fleet.sh)");
        String cause = ApiServerBinaries.unavailabilityCause().orElse(null);
        Assumptions.assumeTrue(cause == null, cause);
        int nodes = Integer.parseInt(nodesProperty);
        int services = Integer.getInteger("fleet.services", 1000);
        int changes = Integer.getInteger("fleet.changes", 1000);
        Duration idle = Duration.ofSeconds(Long.getLong("fleet.idleSeconds", 60));
        List<String> sides = Arrays.asList(System.getProperty("fleet.sides", "nftproxy,client-go").split(","));
        String clientGo = System.getProperty("fleet.clientGo");

        Path dir = Files.createTempDirectory("nftp-fleet-");
        Path policy = dir.resolve("audit-policy.yaml");
        Files.writeString(policy, """
                apiVersion: audit.k8s.io/v1
                kind: Policy
                omitStages: [ResponseStarted, ResponseComplete, Panic]
                rules:
                - level: Metadata
                  users: ["%s"]
                - level: None
                """.formatted(ApiServerProcess.PROXY_USER));
        Path audit = dir.resolve("audit.log");
        ApiServerProcess.Options options = ApiServerProcess.Options.defaults()
                .withApiServerArgs("--audit-policy-file=" + policy, "--audit-log-path=" + audit);
        StringBuilder report = new StringBuilder();
        try (ApiServerProcess api = ApiServerProcess.start(ApiServerBinaries.locateOrBuild(), options);
             KubernetesClient admin = RealApiServerTest.client(api.adminKubeconfig());
             // A backlog for a fleet: N nodes connect at once (nftproxy four or more connections each, HTTP/1.1), and
             // the default backlog of 50 dropped connects (seen: connect timeouts, retries) that a real API server's
             // listener would have taken.
             ApiRelay relay = new ApiRelay(api.url(), new ServerSocket(0, 4096, InetAddress.getLoopbackAddress()))) {
            populate(api, admin, nodes, services);
            int round = 0;
            for (String side : sides) {
                round++;
                api.restartApiServer();
                Thread.sleep(5_000);   // the watch caches fill from etcd
                long pid = api.apiServerPid();
                Meter meter = new Meter(pid, relay, audit);
                long rssBefore = SideBySideBench.rssMb(pid, "VmRSS");
                List<Phase> phases = new ArrayList<>();
                Fleet fleet = side.equals("client-go") ? new GoFleet(Path.of(clientGo), api, relay, nodes, dir.resolve("client-go.log"))
                        : new NftproxyFleet(api, relay, nodes);
                try {
                    Meter.Mark m = meter.mark();
                    fleet.start();
                    double s = fleet.awaitSynced();
                    phases.add(meter.phase("initial lists", m, s));

                    m = meter.mark();
                    long t0 = System.nanoTime();
                    for (int i = 0; i < changes; i++) {
                        int k = (i * 37) % services;
                        String moved = "10." + (240 + round) + "." + (i / 250 % 250 + 1) + "." + (i % 250 + 1);
                        admin.discovery().v1().endpointSlices().inNamespace(NS).resource(DaemonAgainstApiServerTest.slice(NS, "s" + k,
                                "s" + k + "-1", 8080, List.of(SideBySideBench.endpoint(k, 1), moved))).update();
                    }
                    String marker = "marker-" + round;
                    admin.discovery().v1().endpointSlices().inNamespace(NS)
                            .resource(DaemonAgainstApiServerTest.slice(NS, marker, marker + "-1", 8080, List.of("10.239.0." + round))).create();
                    fleet.awaitSlice(marker + "-1");
                    phases.add(meter.phase(changes + " changes", m, (System.nanoTime() - t0) / 1e9));

                    m = meter.mark();
                    Thread.sleep(idle.toMillis());
                    phases.add(meter.phase("idle " + idle.toSeconds() + " s", m, idle.toSeconds()));

                    m = meter.mark();
                    fleet.close();
                    fleet = side.equals("client-go") ? new GoFleet(Path.of(clientGo), api, relay, nodes, dir.resolve("client-go-2.log"))
                            : new NftproxyFleet(api, relay, nodes);
                    fleet.start();
                    s = fleet.awaitSynced();
                    phases.add(meter.phase("all restart", m, s));
                } finally {
                    fleet.close();
                }
                long peak = SideBySideBench.rssMb(pid, "VmHWM");
                String head = String.format(Locale.ROOT, "%s, %d nodes, %d Services x 2 endpoints: API server RSS %d MiB before, peak %d MiB",
                        side, nodes, services, rssBefore, peak);
                System.out.println("RESULT " + head);
                report.append(head).append('\n').append(Phase.HEADER).append('\n');
                for (Phase p : phases) {
                    String line = p.line(nodes);
                    System.out.println("RESULT " + side + " | " + line);
                    report.append(line).append('\n');
                    report.append("    requests: ").append(p.byKind()).append('\n');
                }
            }
            System.out.println("\nfleet:\n" + report);
            System.out.println("audit log (request URIs): " + audit);
        }
    }

    private static void populate(ApiServerProcess api, KubernetesClient admin, int nodes, int services) throws Exception {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).create();
        for (int i = 0; i < nodes; i++) {
            admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE_PREFIX + i).endMetadata().build()).create();
            int a = i + 1;
            admin.nodes().withName(NODE_PREFIX + i).editStatus(n -> new NodeBuilder(n).editOrNewStatus().addNewAddress().withType("InternalIP")
                    .withAddress("192.168." + (a / 250) + "." + (a % 250 + 1)).endAddress().endStatus().build());
        }
        long ms = StoredServices.create(api, admin, NS, services, k -> List.of(SideBySideBench.endpoint(k, 1), SideBySideBench.endpoint(k, 2)));
        System.out.printf("populated %d nodes, %d services x 2 endpoints in %d s%n", nodes, services, ms / 1000);
    }

    // ---------------------------------------------------------------- measuring

    /** One phase's cost; per node is the total over N. */
    record Phase(String name, double seconds, int requests, Map<String, Integer> kinds, long toServer, long toClients,
                 long connections, double apiCpu) {
        static final String HEADER = "phase | seconds | requests | per node | KiB per node (down / up) | connections | API server CPU-s";

        String line(int nodes) {
            return String.format(Locale.ROOT, "%s | %.1f | %d | %.2f | %.1f / %.1f | %d | %.2f", name, seconds, requests,
                    requests / (double) nodes, toClients / 1024.0 / nodes, toServer / 1024.0 / nodes, connections, apiCpu);
        }

        String byKind() { return kinds.toString(); }
    }

    /** Counters at a moment: relay bytes, API server CPU, audit log length. */
    private static final class Meter {
        record Mark(long[] relayed, double cpu, long auditOffset) {}

        private final long pid;
        private final ApiRelay relay;
        private final Path audit;

        Meter(long pid, ApiRelay relay, Path audit) {
            this.pid = pid;
            this.relay = relay;
            this.audit = audit;
        }

        Mark mark() throws IOException {
            return new Mark(relay.relayed(), SideBySideBench.cpuSeconds(pid)[0], Files.exists(audit) ? Files.size(audit) : 0);
        }

        Phase phase(String name, Mark from, double seconds) throws IOException, InterruptedException {
            Thread.sleep(1_000);   // the audit log's writer and the relay's pumps catch up
            Mark to = mark();
            Map<String, Integer> kinds = new TreeMap<>();
            int requests = 0;
            try (RandomAccessFile f = new RandomAccessFile(audit.toFile(), "r")) {
                f.seek(from.auditOffset());
                byte[] b = new byte[(int) (to.auditOffset() - from.auditOffset())];
                f.readFully(b);
                for (String l : new String(b, StandardCharsets.UTF_8).split("\n")) {
                    Matcher verb = VERB.matcher(l);
                    Matcher uri = URI.matcher(l);
                    if (!verb.find() || !uri.find()) continue;
                    requests++;
                    String path = uri.group(1).replaceFirst("\\?.*", "").replaceFirst("^/apis?/(.*/)?v1/", "");
                    kinds.merge(verb.group(1) + " " + path, 1, Integer::sum);
                }
            }
            return new Phase(name, seconds, requests, kinds, to.relayed()[0] - from.relayed()[0], to.relayed()[1] - from.relayed()[1],
                    to.relayed()[2] - from.relayed()[2], to.cpu() - from.cpu());
        }
    }

    // ---------------------------------------------------------------- the two sides

    private interface Fleet extends AutoCloseable {
        void start() throws IOException;

        /** Seconds from {@link #start} until every node has listed every kind. */
        double awaitSynced() throws Exception;

        /** Waits until every node holds the EndpointSlice {@code name}. */
        void awaitSlice(String name) throws Exception;

        @Override void close() throws IOException;
    }

    /** N of nftproxy's API sources in this JVM, each with its own {@link ApiServer} (own HTTP client, own connections). */
    private static final class NftproxyFleet implements Fleet {
        private final ApiServerProcess api;
        private final ApiRelay relay;
        private final int nodes;
        private final List<KubernetesSource> sources = new ArrayList<>();
        private final List<ClusterStore> stores = new ArrayList<>();
        private long started;

        NftproxyFleet(ApiServerProcess api, ApiRelay relay, int nodes) {
            this.api = api;
            this.relay = relay;
            this.nodes = nodes;
        }

        @Override public void start() {
            started = System.nanoTime();
            for (int i = 0; i < nodes; i++) {
                ClusterStore store = new ClusterStore();
                KubernetesSource source = new KubernetesSource(ApiServer.fromKubeconfig(api.proxyKubeconfig()).at(relay.url()), store);
                stores.add(store);
                sources.add(source);
                source.start(NODE_PREFIX + i);
            }
        }

        @Override public double awaitSynced() throws InterruptedException {
            long deadline = System.nanoTime() + SYNC_LIMIT.toNanos();
            for (ClusterStore s : stores) {
                while (!s.ready()) {
                    if (System.nanoTime() > deadline) throw new AssertionError("not every node synced in " + SYNC_LIMIT);
                    Thread.sleep(10);
                }
            }
            return (System.nanoTime() - started) / 1e9;
        }

        @Override public void awaitSlice(String name) throws InterruptedException {
            String service = NS + "/" + name.replaceFirst("-1$", "");
            long deadline = System.nanoTime() + SYNC_LIMIT.toNanos();
            for (ClusterStore s : stores) {
                while (s.endpointSlices(service).isEmpty()) {
                    if (System.nanoTime() > deadline) throw new AssertionError(name + " did not reach every node in " + SYNC_LIMIT);
                    Thread.sleep(10);
                }
            }
        }

        @Override public void close() { sources.forEach(KubernetesSource::close); }
    }

    /** N client-go clientsets with kube-proxy's informers in one Go process (benchmarks/fleet-client-go). */
    private static final class GoFleet implements Fleet {
        private final List<String> command;
        private final Path log;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private Process process;

        GoFleet(Path binary, ApiServerProcess api, ApiRelay relay, int nodes, Path log) {
            Assumptions.assumeTrue(binary != null && Files.isExecutable(binary), "-Dfleet.clientGo=BINARY (benchmarks/fleet.sh builds it)");
            this.command = List.of(binary.toString(), "-kubeconfig", api.proxyKubeconfig().toString(), "-server", relay.url().toString(),
                    "-nodes", Integer.toString(nodes), "-node-prefix", NODE_PREFIX, "-namespace", NS);
            this.log = log;
        }

        @Override public void start() throws IOException {
            process = new ProcessBuilder(command).redirectError(log.toFile()).start();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String l; (l = r.readLine()) != null; ) lines.add(l);
                } catch (IOException ignored) {
                    // the process ended
                }
            }, "fleet-client-go-out");
            reader.setDaemon(true);
            reader.start();
        }

        private String expect(String prefix) throws InterruptedException {
            String l = lines.poll(SYNC_LIMIT.toSeconds(), TimeUnit.SECONDS);
            if (l == null || !l.startsWith(prefix)) {
                throw new AssertionError("fleet-client-go: expected '" + prefix + "...', got " + l + " (log " + log + ")");
            }
            return l;
        }

        @Override public double awaitSynced() throws InterruptedException {
            return Double.parseDouble(expect("synced ").substring("synced ".length()));
        }

        @Override public void awaitSlice(String name) throws IOException, InterruptedException {
            OutputStream in = process.getOutputStream();
            in.write(("await " + name + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
            expect("seen " + name);
        }

        @Override public void close() throws IOException {
            if (process == null) return;
            process.getOutputStream().close();
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
            process = null;
        }
    }
}
