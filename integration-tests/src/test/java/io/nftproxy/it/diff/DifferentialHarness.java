package io.nftproxy.it.diff;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.nftproxy.TestAddresses;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.it.api.ApiServerBinaries;
import io.nftproxy.it.api.ApiServerProcess;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.UnrecognisedRuleException;
import io.nftproxy.service.NodeContext;
import io.nftproxy.service.ProxyStateBuilder;
import io.nftproxy.random.FlowDifferential;
import io.nftproxy.random.NodeSettings;
import io.nftproxy.random.ProbeFlows;
import io.nftproxy.readback.KernelTableParser;
import io.nftproxy.readback.TableComparison;
import io.nftproxy.source.ClusterOnce;
import io.nftproxy.source.api.ApiServer;
import io.nftproxy.trace.Packet;
import io.nftproxy.trace.PacketTracer;
import io.nftproxy.trace.Probability;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Upstream kube-proxy and nftproxy against one real, dual-stack API server holding a cluster, compared by what they
 * put in the kernel. {@link #compare} writes a {@link ClusterSnapshot} into the API server, runs kube-proxy,
 * nftproxy with {@code --table-layout upstream} and nftproxy with its default layout, each as a process in its own
 * namespace with the same node name, addresses and configuration file, waits until each has synced, reads the three
 * tables back from the kernel (ip and ip6) and returns every difference:
 * <ul>
 *   <li>upstream layout: kube-proxy's table and nftproxy's, object by object, both read by the same nft: parsed and
 *       compared by {@link TableComparison} (strict: chains, rules in order, sets, maps, elements, comments,
 *       priorities), and as nft's JSON itself ({@link NftJsonObjects}: every key nft reports, without handles
 *       and element order, which carry no meaning);</li>
 *   <li>default layout: every {@link ProbeFlows probe flow} traced by {@link PacketTracer} through kube-proxy's
 *       table and through nftproxy's must end the same way ({@link FlowDifferential}: verdict, DNAT targets with their
 *       masquerade, affinity and delivery, and the odds of each).</li>
 * </ul>
 * The cluster is deleted again afterwards, so one harness serves any number of clusters (the feature corpus, a
 * seeded random generator's).
 */
public final class DifferentialHarness implements AutoCloseable {
    /** The API server's service ranges: the test address plan's, both families (dual-stack Services need both). */
    static final String SERVICE_CLUSTER_IP_RANGES = TestAddresses.SERVICE_CIDR + "," + TestAddresses.SERVICE_CIDR6;
    private static final Duration SYNC_LIMIT = Duration.ofMinutes(5);

    private final ApiServerProcess api;
    private final KubernetesClient admin;
    private final Path kubeProxy;

    private DifferentialHarness(ApiServerProcess api, KubernetesClient admin, Path kubeProxy) {
        this.api = api;
        this.admin = admin;
        this.kubeProxy = kubeProxy;
    }

    /**
     * For a test class's {@code @BeforeAll}: the harness with the kube-proxy {@link KubeProxyBinary} finds; or the
     * test aborted (skipped), saying why, without kube-proxy, the API server or network namespaces; or failed
     * instead when {@value KubeProxyBinary#REQUIRED_ENV} is set (CI).
     */
    static DifferentialHarness startOrSkip(Class<?> test) throws Exception {
        Optional<String> cause = Stream.of(KernelNamespace.unavailabilityCause(), ApiServerBinaries.unavailabilityCause(),
                KubeProxyBinary.unavailabilityCause()).flatMap(Optional::stream).findFirst();
        if (cause.isPresent()) {
            if (KubeProxyBinary.required()) Assertions.fail(KubeProxyBinary.REQUIRED_ENV + " is set, but: " + cause.get());
            System.out.println("SKIPPED " + test.getSimpleName() + ": " + cause.get());
            Assumptions.abort(cause.get());
        }
        Path kubeProxy = KubeProxyBinary.locate().orElseThrow();
        System.out.println(test.getSimpleName() + ": differential tests against " + kubeProxy);
        return start(kubeProxy);
    }

    /** A fresh etcd and kube-apiserver with dual-stack service ranges, and kube-proxy at {@code kubeProxy}. */
    public static DifferentialHarness start(Path kubeProxy) throws Exception {
        ApiServerProcess api = ApiServerProcess.start(ApiServerBinaries.locateOrBuild(), ApiServerProcess.Options.defaults()
                .withApiServerArgs("--service-cluster-ip-range=" + SERVICE_CLUSTER_IP_RANGES));
        try {
            return new DifferentialHarness(api, new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(api.adminKubeconfig().toFile())).build(), kubeProxy);
        } catch (RuntimeException e) {
            api.close();
            throw e;
        }
    }

    /** What one comparison found; {@link #same()} when nothing. */
    /**
     * @param objects    chains, rules, sets, maps and elements in kube-proxy's tables: what the upstream layout's
     *                   comparison covered
     * @param flowsDnat  probe flows kube-proxy's table DNATs: how many of the traced flows reached an endpoint
     * @param control    object differences between kube-proxy's table and nftproxy's default-layout one, which
     *                   differ by design: nonzero shows the object comparison sees a difference where there is one
     */
    public record Differences(String settings, int services, List<String> upstreamLayout, List<String> defaultLayout,
                              int objects, int flowsTraced, int flowsDnat, int control, long millis) {
        public boolean same() { return upstreamLayout.isEmpty() && defaultLayout.isEmpty(); }

        /** The differences, readable: each under the comparison that found it, at most {@code limit} of each. */
        public String report(int limit) {
            StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%d Services, %s: %d objects compared, %d flows traced (%d DNATed), %.1f s"
                    + " (control: the default layout's table differs from kube-proxy's in %d objects, as designed)%n",
                    services, settings, objects, flowsTraced, flowsDnat, millis / 1000.0, control));
            section(sb, "upstream layout, kube-proxy's table (expected) vs nftproxy's (actual)", upstreamLayout, limit);
            section(sb, "default layout, the same flow traced through kube-proxy's table vs nftproxy's", defaultLayout, limit);
            return sb.toString();
        }

        private static void section(StringBuilder sb, String title, List<String> d, int limit) {
            sb.append("  ").append(title).append(": ").append(d.isEmpty() ? "no differences" : d.size() + " difference(s)").append('\n');
            d.stream().limit(limit).forEach(x -> sb.append("    ").append(x.replace("\n", "\n    ")).append('\n'));
            if (d.size() > limit) sb.append("    ... and ").append(d.size() - limit).append(" more\n");
        }
    }

    /**
     * Writes {@code cluster}, runs the three proxies as {@code node}, compares, and removes the cluster again. The
     * cluster must hold the Node {@code node.nodeName()}, reporting the node's addresses: kube-proxy waits for it.
     */
    public Differences compare(ClusterSnapshot cluster, NodeSettings node) throws Exception {
        if (cluster.node(node.nodeName()) == null) {
            throw new IllegalArgumentException("the cluster has no Node " + node.nodeName() + ": kube-proxy waits for its Node;"
                    + " add one reporting the node's addresses " + node.hostAddresses() + " (NodeSettings.nodeObject())");
        }
        long t0 = System.nanoTime();
        ClusterObjects objects = new ClusterObjects(admin);
        try {
            objects.write(cluster);
            // The cluster as the proxies get it, defaulted and allocated by the API server: what the flows probe.
            ClusterSnapshot stored = ClusterOnce.read(ApiServer.fromKubeconfig(api.adminKubeconfig()), node.nodeName(),
                    Duration.ofSeconds(120)).snapshot();
            List<ProxyUnderTest> started = new ArrayList<>();
            try {
                started.add(ProxyUnderTest.kubeProxy(kubeProxy, api, node));
                started.add(ProxyUnderTest.nftproxy("upstream", api, node));
                started.add(ProxyUnderTest.nftproxy("", api, node));
                Map<IpFamily, String> upstream = started.get(0).awaitTables(SYNC_LIMIT);
                Map<IpFamily, String> sameLayout = started.get(1).awaitTables(SYNC_LIMIT);
                Map<IpFamily, String> defaultLayout = started.get(2).awaitTables(SYNC_LIMIT);
                List<String> tableDiffs = new ArrayList<>();
                List<String> flowDiffs = new ArrayList<>();
                int[] counts = {0, 0, 0};
                int control = 0;
                for (IpFamily f : IpFamily.values()) {
                    tableDiffs.addAll(tables(f, upstream.get(f), sameLayout.get(f), counts));
                    control += tables(f, upstream.get(f), defaultLayout.get(f), new int[3]).size();
                    flowDiffs.addAll(flows(f, stored, node, upstream.get(f), defaultLayout.get(f), counts));
                }
                return new Differences(node.summary(), stored.services().size(), tableDiffs, flowDiffs, counts[0], counts[1],
                        counts[2], control, (System.nanoTime() - t0) / 1_000_000);
            } finally {
                for (ProxyUnderTest p : started) p.close();
            }
        } finally {
            objects.deleteAll();
        }
    }

    /**
     * The two tables of family {@code f}, parsed; or, when they cannot be compared (one side has none, one cannot be
     * read back), the difference that says so. Neither side having one is no difference.
     */
    private record Parsed(String table, TableContent theirs, TableContent ours, List<String> problem) {
        static Parsed of(IpFamily f, String kubeProxy, String nftproxy) {
            String table = "table " + f.nftFamily() + " kube-proxy";
            if (kubeProxy == null || nftproxy == null) {
                if (kubeProxy == null && nftproxy == null) return new Parsed(table, null, null, List.of());
                return new Parsed(table, null, null, List.of(table + ": only " + (kubeProxy == null ? "nftproxy" : "kube-proxy") + " has one"));
            }
            TableContent theirs;
            try {
                theirs = KernelTableParser.parse(kubeProxy);
            } catch (UnrecognisedRuleException e) {
                return new Parsed(table, null, null, List.of(table + ": kube-proxy's cannot be read back: " + e.getMessage()));
            }
            try {
                return new Parsed(table, theirs, KernelTableParser.parse(nftproxy), null);
            } catch (UnrecognisedRuleException e) {
                return new Parsed(table, null, null, List.of(table + ": nftproxy's cannot be read back: " + e.getMessage()));
            }
        }
    }

    /** {@code counts[0]} gets the number of objects in kube-proxy's table. */
    private static List<String> tables(IpFamily f, String kubeProxy, String nftproxy, int[] counts) {
        Parsed t = Parsed.of(f, kubeProxy, nftproxy);
        if (t.problem() != null) return t.problem();
        counts[0] += t.theirs().chains().size() + t.theirs().ruleCount() + t.theirs().sets().size() + t.theirs().allElements().size();
        List<String> out = new ArrayList<>(TableComparison.diff(t.theirs(), t.ours()).stream().map(d -> t.table() + ": " + d).toList());
        out.addAll(NftJsonObjects.diff(kubeProxy, nftproxy).stream().map(d -> t.table() + " (nft's JSON): " + d).toList());
        return out;
    }

    /** {@code counts[1]} gets the flows traced, {@code counts[2]} those kube-proxy's table DNATs. */
    private static List<String> flows(IpFamily f, ClusterSnapshot cluster, NodeSettings node, String kubeProxy, String nftproxy,
                                      int[] counts) {
        Parsed t = Parsed.of(f, kubeProxy, nftproxy);
        if (t.problem() != null) return t.problem();
        // The tracer takes the node's own addresses and loopback as local, as the kernel's fib does.
        List<IpAddress> local = Stream.concat(node.hostAddresses().stream(), Stream.of("127.0.0.1", "::1")).map(IpAddress::parse).toList();
        NodeContext ctx = node.context().withLocalAddresses(local);
        List<Packet> packets = ProbeFlows.of(ProxyStateBuilder.build(cluster, f, node.nodeName()), ctx);
        List<Map<String, Probability>> expected = FlowDifferential.behaviours(t.theirs(), ctx, packets);
        counts[1] += packets.size();
        counts[2] += (int) expected.stream().filter(FlowDifferential::dnats).count();
        return FlowDifferential.compare(expected, t.theirs(), t.ours(), ctx, packets).stream()
                .map(d -> d.packet() + ": kube-proxy's table vs nftproxy's: " + d.what()).toList();
    }

    @Override public void close() throws Exception {
        try {
            admin.close();
        } finally {
            api.close();
        }
    }
}
