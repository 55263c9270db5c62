package io.nftproxy.demo;

import io.nftproxy.config.ProxyConfig;
import io.nftproxy.daemon.NodeNetwork;
import io.nftproxy.daemon.ProxyDaemon;
import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.OwnNamespaces;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.nft.TableContent;
import io.nftproxy.render.TableLayout;
import io.nftproxy.source.ManifestDirectorySource;
import io.nftproxy.systemd.SdNotify;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.nftproxy.demo.DemoCluster.*;

/**
 * {@code nftproxy demo}, step by step: the example cluster as namespaces ({@link DemoCluster}), the daemon running
 * in this JVM on the node namespace and a temporary copy of the embedded example manifests, real requests to a
 * ClusterIP and a NodePort, a scale-down, and the cleanup. Everything it creates is released by {@link #close()},
 * which a shutdown hook also calls, so Ctrl-C cleans up too. Prints to the writer it is given; logs nothing.
 */
public final class Demo implements AutoCloseable {
    public static final int MAX_REQUESTS = Probe.MAX_PROBES;
    private static final int STEPS = 8;
    private static final Duration FIRST_SYNC_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration APPLY_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration POLL = Duration.ofMillis(25);
    private static final String INDENT = "      ";

    /** {@code keep}: leave the namespaces (and their rules) for exploration instead of deleting them. */
    public record Options(int requests, boolean keep) {
        public Options {
            if (requests < 1 || requests > MAX_REQUESTS) throw new IllegalArgumentException("requests must be 1.." + MAX_REQUESTS);
        }
    }

    private final PrintWriter out;
    private final Options options;
    /** What to release, most recent first; guarded by {@code this}, since the shutdown hook races the main thread. */
    private final Deque<AutoCloseable> resources = new ArrayDeque<>();
    private boolean closed;
    private int step;
    private long stepStart;
    private Topology topology;
    private Path manifests;

    public Demo(PrintWriter out, Options options) {
        this.out = out;
        this.options = options;
    }

    /**
     * Runs every step; true when every request was answered and every expected backend answered. Throws when the
     * demo could not go on (a namespace could not be made, the daemon never synced); {@link #close()} cleans up
     * either way.
     */
    public boolean run() throws Exception {
        long start = System.nanoTime();
        List<String> failures = new ArrayList<>();

        step("Extracting the example manifests (embedded in nftproxy) to a temporary directory");
        manifests = Files.createTempDirectory("nftproxy-demo-");
        own(() -> deleteTree(manifests));
        List<Path> files = EmbeddedManifests.extractTo(manifests);
        line(files.size() + " files in " + manifests + ", e.g. " + HELLO_MANIFEST);
        done();

        step("Building the cluster out of network namespaces (nothing touches this host's own network)");
        Topology t = Topology.build(DemoCluster.plan());
        synchronized (this) {
            topology = t;
        }
        own(this::releaseTopology);
        for (Topology.Host h : topology.hosts()) line(String.format("%-12s %-15s netns %s", h.role(), h.address(), h.netns()));
        for (Topology.Host b : topology.backends()) own(EchoServer.start(b.thread(), b.role(), BACKEND_PORT, BACKEND_PORT));
        line("each hello pod answers on :" + BACKEND_PORT + " with its name and the client address it saw");
        done();

        step("Starting the nftproxy daemon on " + NODE + " (in this process, watching the manifest copy)");
        ProxyDaemon daemon = startDaemon();
        if (!daemon.awaitFirstSync(FIRST_SYNC_TIMEOUT)) throw new IOException("the daemon did not program the node within " + FIRST_SYNC_TIMEOUT.toSeconds() + " s");
        line("table ip kube-proxy and table ip6 kube-proxy programmed on " + NODE);
        done();

        step("The rules for demo/hello, as `nft list` shows them on " + NODE);
        print(helloRules());
        line("");
        print(nft("list", "map", "ip", "kube-proxy", "service-ips"));
        done();

        step(options.requests() + " requests from pod-client (" + POD_CLIENT + ") to hello's ClusterIP " + HELLO_CLUSTER_IP + ":" + HELLO_PORT);
        expect(failures, spread(Probe.from(topology.podClient()).tcp(HELLO_CLUSTER_IP, HELLO_PORT, options.requests()), BACKENDS, POD_CLIENT));
        line("numgen random spreads new connections evenly; traffic from inside --cluster-cidr " + CLUSTER_CIDR + " keeps its source");
        done();

        step(options.requests() + " requests from the external client (" + EXTERNAL_CLIENT + ") to hello-np's NodePort " + NODE_IP + ":" + HELLO_NODE_PORT);
        expect(failures, spread(Probe.from(topology.external()).tcp(NODE_IP, HELLO_NODE_PORT, options.requests()), BACKENDS, EXTERNAL_CLIENT));
        line("externalTrafficPolicy Cluster: masqueraded, so replies from k8s-node-2's pods come back through " + NODE);
        done();

        step("Scaling hello down: " + SCALED_AWAY.role() + " (" + SCALED_AWAY.address() + ") leaves its EndpointSlice");
        String before = helloRules();
        long edited = System.nanoTime();
        if (EndpointRemoval.remove(manifests.resolve(HELLO_MANIFEST), HELLO, SCALED_AWAY.address()) != 1) {
            throw new IOException(HELLO_MANIFEST + " does not list " + SCALED_AWAY.address() + " exactly once");
        }
        String chain = awaitChainChange(before);
        line(String.format("edited %s; the daemon applied it %d ms later:", HELLO_MANIFEST, (System.nanoTime() - edited) / 1_000_000));
        print(chain);
        List<Backend> remaining = BACKENDS.stream().filter(b -> b != SCALED_AWAY).toList();
        line("");
        line(options.requests() + " requests from pod-client to " + HELLO_CLUSTER_IP + ":" + HELLO_PORT + " again:");
        expect(failures, spread(Probe.from(topology.podClient()).tcp(HELLO_CLUSTER_IP, HELLO_PORT, options.requests()), remaining, POD_CLIENT));
        done();

        step(options.keep() ? "Stopping; the namespaces stay" : "Cleaning up");
        close();
        if (options.keep()) explore();
        else line("daemon stopped, namespaces deleted, " + manifests + " removed");
        done();
        out.printf("%nDemo %s in %.1f s.%n", failures.isEmpty() ? "finished"
                : "finished WITH UNEXPECTED RESULTS: " + String.join("; ", failures), (System.nanoTime() - start) / 1e9);
        out.flush();
        return failures.isEmpty();
    }

    private ProxyDaemon startDaemon() throws Exception {
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = NODE;
        b.clusterCidrs = List.of(IpPrefix.parse(CLUSTER_CIDR), IpPrefix.parse(CLUSTER_CIDR6));
        b.manifests = manifests;
        // Port 0: no health or metrics server; they would listen in this host's namespace.
        b.healthzBindAddress = new InetSocketAddress("127.0.0.1", 0);
        b.metricsBindAddress = new InetSocketAddress("127.0.0.1", 0);
        b.tableLayout = LAYOUT;
        ProxyConfig config = b.build().validate();
        OwnProcesses own = OwnProcesses.thisProcess();
        NetworkNamespace netns = topology.node().netns();
        NftClient client = NftClients.createInNamespace(NftClients.Mode.AUTO, netns, own::registerChild).client();
        ProxyDaemon daemon = new ProxyDaemon(new ProxyDaemon.Options(config, NodeNetwork.namespace(netns), false), client, own,
                new SdNotify(Map.of()), Clock.systemUTC());
        own(daemon);
        daemon.start(store -> new ManifestDirectorySource(manifests, store, Duration.ofMillis(20)));
        return daemon;
    }

    /** Adds what went wrong in the step now running, named by its number, when {@code problem} is not null. */
    private void expect(List<String> failures, String problem) {
        if (problem != null) failures.add("step " + step + ": " + problem);
    }

    /**
     * Prints one bar per expected backend: how many requests it answered and the source address it saw, with
     * whether that was the client's own (kept) or a node's (masqueraded). Returns what was wrong, or null: a request
     * without an answer, a backend that should not have answered, or, when so many requests were sent that a fair
     * random spread misses a backend by chance less than once in {@link #SPREAD_CHANCE} demos, a backend that got none.
     */
    String spread(List<Probe.Outcome> outcomes, List<Backend> expected, String client) {
        Map<String, List<Probe.Outcome>> byBackend = new LinkedHashMap<>();
        for (Backend b : expected) byBackend.put(b.role(), new ArrayList<>());
        int failed = 0;
        for (Probe.Outcome o : outcomes) {
            if (o.replied()) byBackend.computeIfAbsent(o.backend(), k -> new ArrayList<>()).add(o);
            else failed++;
        }
        double avg = outcomes.stream().mapToDouble(Probe.Outcome::millis).average().orElse(0);
        for (Map.Entry<String, List<Probe.Outcome>> e : byBackend.entrySet()) {
            Backend b = expected.stream().filter(x -> x.role().equals(e.getKey())).findFirst().orElse(null);
            List<Probe.Outcome> got = e.getValue();
            Set<String> peers = got.stream().map(Probe.Outcome::peer).collect(Collectors.toCollection(TreeSet::new));
            line(String.format("%-12s %-14s %-14s %-30s %3d  %s", e.getKey(), b == null ? "?" : b.address(),
                    b == null ? "(unexpected)" : "on " + b.node(), "#".repeat(Math.min(30, got.size())), got.size(),
                    peers.isEmpty() ? "" : "saw " + peers.stream().map(p -> p + describePeer(p, client)).collect(Collectors.joining(", "))));
        }
        if (failed > 0) {
            line(failed + " of " + outcomes.size() + " requests got no answer: " + Probe.spread(outcomes.stream().filter(o -> !o.replied()).toList()));
        }
        List<String> missed = expected.stream().filter(b -> byBackend.get(b.role()).isEmpty()).map(Backend::role).toList();
        List<String> unexpected = byBackend.keySet().stream().filter(r -> expected.stream().noneMatch(b -> b.role().equals(r))).toList();
        boolean spreadChecked = everyBackendExpected(expected.size(), options.requests());
        line(String.format("backends reached: %d of %d, %d of %d requests answered, %.1f ms per request on average%s",
                expected.size() - missed.size(), expected.size(), outcomes.size() - failed, options.requests(), avg,
                spreadChecked || missed.isEmpty() ? "" : " (with " + options.requests() + " requests a random spread "
                        + "may miss a backend; from " + requestsForSpread(expected.size()) + " on, each must answer)"));
        List<String> problems = new ArrayList<>();
        if (failed > 0 || outcomes.size() != options.requests()) {
            problems.add((options.requests() - (outcomes.size() - failed)) + " of " + options.requests() + " requests got no answer");
        }
        if (!unexpected.isEmpty()) problems.add(String.join(", ", unexpected) + " answered but " + (unexpected.size() == 1 ? "is" : "are") + " not an endpoint");
        if (spreadChecked && !missed.isEmpty()) {
            problems.add(String.join(", ", missed) + " answered none of " + options.requests() + " requests");
        }
        return problems.isEmpty() ? null : String.join(", ", problems);
    }

    /** A fair spread may miss a backend by chance at most once in this many checks, or the check is not made. */
    static final double SPREAD_CHANCE = 10_000;

    /**
     * Whether {@code requests} spread at random over {@code backends} reach every one of them but for a chance below
     * 1/{@link #SPREAD_CHANCE}: the chance that some backend gets none is at most backends x ((backends-1)/backends)^requests.
     * With 3 backends that takes 26 requests (the default 30 misses one about once in 60,000 runs); with 5
     * requests one is missed about 38 times in 100, which is no failure of the rules.
     */
    static boolean everyBackendExpected(int backends, int requests) {
        return backends <= 1 || backends * Math.pow((backends - 1) / (double) backends, requests) < 1 / SPREAD_CHANCE;
    }

    /** The fewest requests for which {@link #everyBackendExpected} holds. */
    static int requestsForSpread(int backends) {
        int n = 1;
        while (!everyBackendExpected(backends, n)) n++;
        return n;
    }

    private static String describePeer(String peer, String client) {
        if (peer.equals(client)) return " (the client's own address: not masqueraded)";
        if (peer.equals(NODE_IP) || peer.equals(NODE_POD_GATEWAY)) return " (" + NODE + "'s address: masqueraded)";
        return "";
    }

    /**
     * Polls the kernel until hello's chain differs from {@code before}, i.e. the daemon applied the edit; returns
     * the new listing. Whether the new chain is right is for the requests that follow to show.
     */
    private String awaitChainChange(String before) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + APPLY_TIMEOUT.toNanos();
        while (true) {
            String chain = helloRules();
            if (!chain.equals(before)) return chain;
            if (System.nanoTime() > deadline) {
                throw new IOException("the daemon did not apply the edit of " + HELLO_MANIFEST + " within " + APPLY_TIMEOUT.toSeconds() + " s");
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    /** The layout the daemon writes, which decides where hello's endpoints are to be found. */
    private static final TableLayout LAYOUT = TableLayout.DEFAULT;
    /** hello's element comment, kube-proxy's {@code namespace/name:port}, which every flat element of hello carries. */
    private static final String HELLO_COMMENT = "comment \"demo/" + HELLO + ":http\"";
    private static final Pattern BLOCK = Pattern.compile("\\s*(set|map) (\\S+) \\{");

    /**
     * How the node's table spreads hello's ClusterIP over its endpoints, as nft lists it: hello's own chain in the
     * chain layouts; in the flat layout, what grep of hello's element comment finds in the listing (each element
     * with the set or map it is in, in listing order; sorted within a map, which nft lists in hash order) and the one rule that DNATs through
     * the map for hello's endpoint count, since hello has no chain of its own.
     */
    private String helloRules() throws IOException {
        if (!LAYOUT.flat()) return nft("list", "chain", "ip", "kube-proxy", helloChain());
        // One listing of the whole table: nft reads it at one ruleset generation, so hello cannot move from one map
        // to another between the reads, as it could between one nft call per map.
        String table = nft("list", "table", IpFamily.IPV4.nftFamily(), TableContent.TABLE_NAME);
        Map<String, List<String>> hello = new LinkedHashMap<>();
        String in = null, endpoints = null;
        for (String line : table.lines().toList()) {
            Matcher m = BLOCK.matcher(line);
            if (m.lookingAt()) in = m.group(1) + " " + m.group(2);
            if (in == null || !line.contains(HELLO_COMMENT)) continue;
            String element = line.strip().replaceFirst("^elements = \\{ ", "").replaceFirst("( \\}|,)$", "");
            hello.computeIfAbsent(in, k -> new ArrayList<>()).add(element);
            if (in.startsWith("map flat-endpoints-")) endpoints = in.substring("map ".length());
        }
        if (endpoints == null) throw new IOException("no flat-endpoints map holds " + HELLO_CLUSTER_IP + ":" + HELLO_PORT);
        String map = endpoints;
        String rule = block(table, "chain services").stream().filter(l -> l.endsWith(" map @" + map)).findFirst()
                .orElseThrow(() -> new IOException("no rule of chain services DNATs through @" + map));
        StringBuilder b = new StringBuilder("nft list table ip kube-proxy | grep '" + HELLO_COMMENT.substring("comment ".length())
                + "' (hello is simple: no chain, its elements carry its name):\n");
        hello.forEach((block, elements) -> elements.stream().sorted().forEach(e -> b.append("    ").append(block).append(": ").append(e).append('\n')));
        b.append("chain services, the rule that picks for every TCP service port with ").append(map.substring(map.lastIndexOf('-') + 1))
                .append(" endpoints:\n    ").append(rule).append('\n');
        return b.toString();
    }

    /** The stripped lines of the block an nft listing opens with {@code header} and a brace, up to its closing brace. */
    private static List<String> block(String listing, String header) {
        List<String> out = new ArrayList<>();
        String close = null;
        for (String line : listing.lines().toList()) {
            if (close == null) {
                if (line.strip().equals(header + " {")) close = line.substring(0, line.indexOf(header)) + "}";
            } else if (line.equals(close)) {
                break;
            } else {
                out.add(line.strip());
            }
        }
        return out;
    }

    private String nft(String... args) throws IOException {
        return topology.exec(topology.node(), Stream.concat(Stream.of("nft"), Stream.of(args)).toArray(String[]::new));
    }

    /** What to type to look around the kept namespaces, and to delete them. */
    private void explore() {
        NetworkNamespace node = topology.node().netns();
        line("the namespaces and the node's tables stay; the daemon and the hello servers have stopped. Look around:");
        line("  ip netns exec " + node + " nft list table ip kube-proxy");
        line("  ip netns exec " + node + (LAYOUT.flat() ? " nft list table ip kube-proxy | grep demo/" + HELLO + ":"
                : " nft list chain ip kube-proxy " + helloChain()));
        line("  ip netns exec " + node + " conntrack -L");
        line("  ip netns exec " + node + " ./nftproxy conntrack --manifests examples --hostname-override " + NODE + " --service demo/" + HELLO);
        line("  ip netns exec " + topology.podClient().netns() + " ip route");
        line("Delete them with:");
        for (Topology.Host h : topology.hosts()) line("  ip netns del " + h.netns());
    }

    /** Stops everything this demo started; deletes the namespaces unless {@code --keep}. Idempotent. */
    @Override public synchronized void close() {
        if (closed) return;
        closed = true;
        while (!resources.isEmpty()) {
            try {
                resources.pop().close();
            } catch (Exception e) {
                out.println(INDENT + "cleanup: " + e.getMessage());
            }
        }
        if (!options.keep()) {
            try {
                List<String> swept = OwnNamespaces.deleteExisting(TAG);
                if (!swept.isEmpty()) out.println(INDENT + "cleanup: deleted namespaces of an interrupted step: " + swept);
            } catch (IOException e) {
                out.println(INDENT + "cleanup: " + e.getMessage() + "; list what is left with: ip netns list | grep " + OwnNamespaces.prefix(TAG));
            }
        }
        out.flush();
    }

    private void releaseTopology() throws IOException {
        if (options.keep()) topology.release();
        else topology.close();
    }

    private synchronized void own(AutoCloseable resource) throws InterruptedException {
        if (closed) {
            try {
                resource.close();
            } catch (Exception e) {
                // Already shutting down; nothing better to do with it.
            }
            throw new InterruptedException("stopped");
        }
        resources.push(resource);
    }

    private void step(String title) {
        step++;
        stepStart = System.nanoTime();
        out.printf("%n[%d/%d] %s%n", step, STEPS, title);
        out.flush();
    }

    private void done() {
        out.printf(INDENT + "(%d ms)%n", (System.nanoTime() - stepStart) / 1_000_000);
        out.flush();
    }

    private void line(String s) {
        out.println(s.isEmpty() ? "" : INDENT + s);
    }

    private void print(String block) {
        block.lines().forEach(l -> out.println(INDENT + "  " + l));
        out.flush();
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) s.sorted((a, b) -> b.getNameCount() - a.getNameCount())::iterator) Files.deleteIfExists(p);
        }
    }
}
