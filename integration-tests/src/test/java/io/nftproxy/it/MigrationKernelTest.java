package io.nftproxy.it;

import io.nftproxy.TestAddresses;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.cli.ExitCodes;
import io.nftproxy.demo.EchoServer;
import io.nftproxy.demo.Probe;
import io.nftproxy.demo.Topology;
import io.nftproxy.it.daemon.DaemonProcess;
import io.nftproxy.it.net.TestNetworks;
import io.nftproxy.netlink.KernelNamespace;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.util.Optional;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.nftproxy.it.net.TestNetworks.BACKEND_TCP_PORT;
import static io.nftproxy.it.net.TestNetworks.BACKEND_UDP_PORT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * docs/migrating-from-kube-proxy.md, run: a node namespace holds kube-proxy's iptables-mode rules (iptables-nft, as
 * kube-proxy 1.36 writes them) for a TCP and a UDP Service with three real backends each, a pod keeps connecting to the
 * TCP one's ClusterIP and keeps one UDP flow (fixed source port) talking to the other's, and
 * the guide's steps marked {@code <!-- migration-test: systemd -->} run one by one as written — the unit's own
 * ExecStartPre and ExecStart for {@code systemctl enable --now} — with nftproxy on manifests for the same Service.
 * No connection may fail and the UDP flow keeps its backend; at the end only nftproxy's table serves. Then the going-back steps, with the same load.
 * The cluster side ({@code kubectl}) is what the test plays itself: the manifests, and kube-proxy's rules when it
 * comes back (as its iptables mode writes them at its first sync; that kube-proxy in iptables mode deletes
 * nftproxy's tables before that, at its start, is kube-proxy's own gap, documented in the guide, not played here).
 */
class MigrationKernelTest {
    static final Path GUIDE = Path.of("../docs/migrating-from-kube-proxy.md");
    static final Path UNIT = Path.of("../systemd/src/main/dist/nftproxy.service");
    static final String CONFIG_IN_GUIDE = "/etc/nftproxy/config.yaml";

    static final String WEB = "172.30.0.10";
    static final int HTTP = 80;
    /** kube-proxy's chain names for default/web:http (the hash does not matter to anyone but kube-proxy). */
    static final String SVC = "KUBE-SVC-MIGRATIONWEBHTTP0";
    /** A UDP Service too: a flow of datagrams keeps its conntrack entry, and so its backend, across the takeover. */
    static final String DNS_IP = "172.30.0.53";
    static final int DNS = 53;
    static final String DNS_SVC = "KUBE-SVC-MIGRATIONDNSUDP00";

    /** One Service's chains and rules as kube-proxy writes them: KUBE-SERVICES → KUBE-SVC → KUBE-SEP (DNAT). */
    private static void service(StringBuilder chains, StringBuilder nat, String svc, String name, String ip, String proto,
                                int port, int targetPort) {
        String[] eps = {TestAddresses.POD_A, TestAddresses.POD_B, TestAddresses.OTHER_POD};
        String[] probability = {"0.33333333349", "0.50000000000", null};
        String sepPrefix = "KUBE-SEP-" + svc.substring("KUBE-SVC-".length(), svc.length() - 1);
        chains.append(':').append(svc).append(" - [0:0]\n");
        for (int i = 0; i < eps.length; i++) chains.append(':').append(sepPrefix).append(i).append(" - [0:0]\n");
        nat.append("-A KUBE-SERVICES -d ").append(ip).append("/32 -p ").append(proto).append(" -m comment --comment \"").append(name)
                .append(" cluster IP\" -m ").append(proto).append(" --dport ").append(port).append(" -j ").append(svc).append('\n')
                .append("-A ").append(svc).append(" ! -s ").append(TestAddresses.CLUSTER_CIDR).append(" -d ").append(ip)
                .append("/32 -p ").append(proto).append(" -m comment --comment \"").append(name).append(" cluster IP\" -m ").append(proto)
                .append(" --dport ").append(port).append(" -j KUBE-MARK-MASQ\n");
        for (int i = 0; i < eps.length; i++) {
            nat.append("-A ").append(svc).append(" -m comment --comment \"").append(name).append(" -> ").append(eps[i]).append(':')
                    .append(targetPort).append('"')
                    .append(probability[i] == null ? "" : " -m statistic --mode random --probability " + probability[i])
                    .append(" -j ").append(sepPrefix).append(i).append('\n');
        }
        for (int i = 0; i < eps.length; i++) {
            String sep = sepPrefix + i;
            nat.append("-A ").append(sep).append(" -s ").append(eps[i]).append("/32 -m comment --comment \"").append(name)
                    .append("\" -j KUBE-MARK-MASQ\n")
                    .append("-A ").append(sep).append(" -p ").append(proto).append(" -m comment --comment \"").append(name).append("\" -m ")
                    .append(proto).append(" -j DNAT --to-destination ").append(eps[i]).append(':').append(targetPort).append('\n');
        }
    }

    /** What kube-proxy 1.36's iptables mode writes for two ClusterIP Services with three endpoints each (nat and filter). */
    static String kubeProxyIptablesRules() {
        StringBuilder chains = new StringBuilder("*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-NODEPORTS - [0:0]\n:KUBE-POSTROUTING - [0:0]\n"
                + ":KUBE-MARK-MASQ - [0:0]\n:KUBE-PROXY-CANARY - [0:0]\n");
        StringBuilder nat = new StringBuilder()
                .append("-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n")
                .append("-A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n")
                .append("-A POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING\n")
                .append("-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000\n")
                .append("-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN\n")
                .append("-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0\n")
                .append("-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE --random-fully\n");
        service(chains, nat, SVC, "default/web:http", WEB, "tcp", HTTP, BACKEND_TCP_PORT);
        service(chains, nat, DNS_SVC, "default/dns:dns", DNS_IP, "udp", DNS, BACKEND_UDP_PORT);
        nat.append("-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this chain\" "
                + "-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n");
        nat.insert(0, chains);
        nat.append("COMMIT\n");
        String filter = """
                *filter
                :KUBE-SERVICES - [0:0]
                :KUBE-EXTERNAL-SERVICES - [0:0]
                :KUBE-FORWARD - [0:0]
                :KUBE-NODEPORTS - [0:0]
                :KUBE-PROXY-FIREWALL - [0:0]
                :KUBE-PROXY-CANARY - [0:0]
                :KUBE-FIREWALL - [0:0]
                -A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL
                -A INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS
                -A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES
                -A INPUT -j KUBE-FIREWALL
                -A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL
                -A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
                -A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
                -A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES
                -A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL
                -A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
                -A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
                -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
                -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
                -A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
                COMMIT
                """;
        return nat + filter;
    }

    /** The same Services for nftproxy, as {@code kubectl get -o yaml} shows them. */
    static String manifests() {
        return manifest("web", WEB, "http", "TCP", HTTP, BACKEND_TCP_PORT) + "---\n" + manifest("dns", DNS_IP, "dns", "UDP", DNS, BACKEND_UDP_PORT);
    }

    private static String manifest(String name, String ip, String portName, String proto, int port, int targetPort) {
        StringBuilder eps = new StringBuilder();
        String[][] endpoints = {{TestAddresses.POD_A, TestAddresses.NODE}, {TestAddresses.POD_B, TestAddresses.NODE},
                {TestAddresses.OTHER_POD, TestAddresses.OTHER_NODE}};
        for (String[] e : endpoints) {
            eps.append("  - addresses: [\"").append(e[0]).append("\"]\n    conditions: {ready: true, serving: true, terminating: false}\n")
                    .append("    nodeName: ").append(e[1]).append('\n');
        }
        return """
                apiVersion: v1
                kind: Service
                metadata: {name: %1$s, namespace: default}
                spec:
                  type: ClusterIP
                  clusterIP: %2$s
                  clusterIPs: ["%2$s"]
                  ipFamilies: [IPv4]
                  ports:
                  - {name: %3$s, port: %5$d, protocol: %4$s, targetPort: %6$d}
                ---
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata:
                  name: %1$s-1
                  namespace: default
                  labels: {kubernetes.io/service-name: %1$s}
                addressType: IPv4
                ports:
                - {name: %3$s, port: %6$d, protocol: %4$s}
                endpoints:
                """.formatted(name, ip, portName, proto, port, targetPort) + eps;
    }

    @TempDir
    Path dir;

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailableAnd(Optional.ofNullable(Topology.unavailabilityCause()),
                KernelNamespace.unavailabilityCause("iptables-nft-restore", "iptables-nft-save"));
    }

    /** The guide's steps under load: not one connection fails, and at the end only nftproxy's table serves. */
    @Test
    void theGuidesStepsTakeTheNodeOverWithoutAFailedConnection() throws Exception {
        List<String> steps = GuideSteps.marked(Files.readString(GUIDE), "systemd");
        List<String> back = GuideSteps.marked(Files.readString(GUIDE), "back");
        assertTrue(steps.stream().anyMatch(s -> s.contains("--dry-run")) && steps.contains("systemctl enable --now nftproxy"),
                "the guide's marked steps check and start nftproxy: " + steps);
        List<EchoServer> servers = new ArrayList<>();
        try (Topology topology = Topology.build(TestNetworks.plan("mig"))) {
            for (Topology.Host b : topology.backends()) servers.add(EchoServer.start(b.thread(), b.role(), BACKEND_TCP_PORT, BACKEND_UDP_PORT));
            KernelNamespace node = KernelNamespace.borrow(topology.node().netns());
            node.execCheckedWithInput(kubeProxyIptablesRules(), "iptables-nft-restore", "--noflush");
            Run run = new Run(topology, node, dir);
            Probe probe = Probe.from(topology.podClient());
            List<Probe.Outcome> before = probe.tcp(WEB, HTTP, 30);
            assertTrue(before.stream().allMatch(Probe.Outcome::replied), "kube-proxy's iptables rules serve the Service: " + before);
            assertTrue(run.iptablesNat().contains(SVC), "seeded");

            // One UDP flow with a fixed source port, its conntrack entry made by kube-proxy's rules: it keeps its backend.
            DatagramChannel udp = topology.podClient().thread().call(() -> DatagramChannel.open().bind(new InetSocketAddress(0)));
            String udpBackend = udpAsk(udp);
            assertTrue(List.of("pod-a", "pod-b", "remote-pod").contains(udpBackend), "kube-proxy's rules serve the UDP Service: " + udpBackend);
            List<String> udpAnswers = new ArrayList<>();
            Load load = Load.start(probe);
            try {
                for (String step : steps) {
                    run.step(step);
                    udpAnswers.add(udpAsk(udp));
                }
                load.mark("after the takeover");
                Thread.sleep(500);
                assertFalse(run.iptablesNat().contains("KUBE-"), "kube-proxy's iptables rules are gone:\n" + run.iptablesNat());
                assertTrue(run.kernelTable().contains(WEB), "nftproxy's table serves " + WEB);
                for (String step : back) {
                    run.step(step);
                    udpAnswers.add(udpAsk(udp));
                }
                load.mark("after going back");
                Thread.sleep(500);
            } finally {
                load.stop();
                run.close();
                udp.close();
            }
            System.out.printf("migration: the UDP flow's backend before the steps %s, after each step %s%n", udpBackend, udpAnswers);
            assertTrue(udpAnswers.stream().allMatch(udpBackend::equals), "the UDP flow kept its backend (its conntrack entry): "
                    + udpBackend + " then " + udpAnswers);
            List<Probe.Outcome> failed = load.outcomes().stream().filter(o -> !o.replied()).toList();
            System.out.printf("migration: %d connections to %s:%d while the guide's %d steps and %d going-back steps ran "
                            + "(%s), %d failed; backends %s%n", load.outcomes().size(), WEB, HTTP, steps.size(), back.size(),
                    load.marks(), failed.size(), Probe.spread(load.outcomes()));
            assertTrue(failed.isEmpty(), "connections failed during the migration: " + failed);
            assertTrue(load.countBefore("after the takeover") >= 50, "enough connections during the takeover: " + load.marks());
            assertTrue(load.outcomes().size() - load.countBefore("after the takeover") >= 20, "enough after it: " + load.marks());
            assertTrue(Probe.spread(load.outcomes()).keySet().containsAll(List.of("pod-a", "pod-b")),
                    "every local backend answered: " + Probe.spread(load.outcomes()));
        } finally {
            for (EchoServer s : servers) s.close();
        }
    }

    /**
     * While both rule sets are in the kernel (kube-proxy's in iptables-nft's {@code ip nat}, ours in
     * {@code ip kube-proxy}, both at dstnat) every connection works, whichever was written first: netfilter asks the
     * NAT chains of a hook one after another, at one priority the later registered first, and the first that maps a
     * new connection decides it alone. Which one that is shows in the iptables DNAT rules' packet counters: none of a
     * run's connections when ours came later (the migration's case), all of them when theirs did.
     */
    @Test
    void bothRuleSetsServeTheSameConnectionsWhileTheyCoexist() throws Exception {
        List<EchoServer> servers = new ArrayList<>();
        try (Topology topology = Topology.build(TestNetworks.plan("mgx"))) {
            for (Topology.Host b : topology.backends()) servers.add(EchoServer.start(b.thread(), b.role(), BACKEND_TCP_PORT, BACKEND_UDP_PORT));
            KernelNamespace node = KernelNamespace.borrow(topology.node().netns());
            Run run = new Run(topology, node, dir);
            Probe probe = Probe.from(topology.podClient());
            List<String> answered = new ArrayList<>();
            for (String order : List.of("iptables first", "nftproxy first")) {
                if (order.equals("iptables first")) {
                    node.execCheckedWithInput(kubeProxyIptablesRules(), "iptables-nft-restore", "--noflush");
                    once(run, node);
                } else {
                    // Our table stays; iptables-nft's tables are created anew, so their base chains register after ours.
                    node.execChecked("nft", "delete", "table", "ip", "nat");
                    node.execChecked("nft", "delete", "table", "ip", "filter");
                    node.execCheckedWithInput(kubeProxyIptablesRules(), "iptables-nft-restore", "--noflush");
                }
                assertTrue(run.iptablesNat().contains(SVC) && run.kernelTable().contains(WEB), order + ": both rule sets are there");
                long before = dnatPackets(node);
                List<Probe.Outcome> outcomes = probe.tcp(WEB, HTTP, 60);
                long byIptables = dnatPackets(node) - before;
                System.out.printf("coexisting rule sets, %s: %d connections, %d failed, %d DNATed by kube-proxy's iptables rules; %s%n",
                        order, outcomes.size(), outcomes.stream().filter(o -> !o.replied()).count(), byIptables, Probe.spread(outcomes));
                assertEquals(60, outcomes.size(), order);
                assertTrue(outcomes.stream().allMatch(Probe.Outcome::replied), order + ": " + outcomes);
                answered.add(order + ": " + (byIptables == 60 ? "iptables" : byIptables == 0 ? "nftproxy" : byIptables + " by iptables"));
                // Of two NAT chains at one priority the one registered later is asked first (the guide says so).
                assertEquals(order.equals("iptables first") ? 0 : 60, byIptables, order + ": the later rule set decides every connection");
            }
            System.out.println("coexisting rule sets, the chain that answered: " + answered);
        } finally {
            for (EchoServer s : servers) s.close();
        }
    }

    /** {@code run --once} on the test's Service: our table programmed, nothing else touched. */
    private void once(Run run, KernelNamespace node) throws IOException {
        CliRun r = CliRun.of("run", "--once", "--config", run.config.toString(), "--manifests", run.manifests.toString(),
                "--netns", node.name());
        assertEquals(ExitCodes.OK, r.exit(), r.err());
    }

    /** The packets kube-proxy's DNAT rules matched: one per connection they decided (NAT sees a connection's first packet). */
    private static long dnatPackets(KernelNamespace node) throws IOException {
        long n = 0;
        Matcher m = Pattern.compile("(?m)^\\[(\\d+):\\d+\\] -A KUBE-SEP-\\S+ .* -j DNAT ").matcher(node.execChecked("iptables-nft-save", "-c", "-t", "nat"));
        while (m.find()) n += Long.parseLong(m.group(1));
        return n;
    }

    /** Executes the guide's commands: nftproxy's own in the test's namespace, the cluster's played by the test. */
    static final class Run implements AutoCloseable {
        private final Topology topology;
        private final KernelNamespace node;
        private final Path config;
        private final Path manifests;
        private DaemonProcess daemon;

        Run(Topology topology, KernelNamespace node, Path dir) throws IOException {
            this.topology = topology;
            this.node = node;
            this.manifests = Files.createDirectories(dir.resolve("manifests"));
            Files.writeString(manifests.resolve("web.yaml"), manifests());
            // kubeadm's file for this node: what `kubectl get configmap kube-proxy` would have copied (no kubeconfig:
            // the test's cluster is the manifest directory). Ports of its own, as the namespace is the node's.
            this.config = Files.writeString(dir.resolve("config.yaml"), """
                    apiVersion: kubeproxy.config.k8s.io/v1alpha1
                    kind: KubeProxyConfiguration
                    mode: nftables
                    hostnameOverride: %s
                    clusterCIDR: %s
                    healthzBindAddress: 0.0.0.0:10256
                    metricsBindAddress: 127.0.0.1:10249
                    conntrack: {maxPerCore: 0}
                    """.formatted(TestAddresses.NODE, TestAddresses.CLUSTER_CIDR));
        }

        void step(String command) throws Exception {
            System.out.println("migration step: " + command);
            String first = command.split("\\s+")[0];
            switch (first) {
                case "kubectl", "install" -> cluster(command);
                case "systemctl" -> systemctl(command);
                case "nftproxy" -> nftproxy(GuideSteps.words(command).subList(1, GuideSteps.words(command).size()));
                case "nft", "iptables-nft-save", "curl" -> shell(command);
                default -> fail("the guide has a marked step this test does not know how to run: " + command);
            }
        }

        /**
         * The cluster's side, played by the test: its objects are the manifests and its configuration the test's file;
         * the label's removal brings kube-proxy (iptables mode) back, which writes its rules at its first sync.
         */
        private void cluster(String command) throws IOException {
            if (command.startsWith("kubectl label node") && GuideSteps.withoutComment(command).endsWith("nftproxy.io/proxy-")) {
                node.execCheckedWithInput(kubeProxyIptablesRules(), "iptables-nft-restore", "--noflush");
                System.out.println("  (kube-proxy is back: its iptables rules written as at its first sync)");
                return;
            }
            System.out.println("  (cluster side: played by the test's manifests and config)");
        }

        private void systemctl(String command) throws Exception {
            command = GuideSteps.withoutComment(command);
            if (command.equals("systemctl enable --now nftproxy")) {
                // What systemd runs: the unit's pre-start (full privileges), then the daemon; start returns at READY.
                String unit = Files.readString(UNIT);
                List<String> pre = unitCommand(unit, "ExecStartPre");
                String natBefore = iptablesNat();
                nftproxy(pre);
                assertEquals(natBefore, iptablesNat(), "the unit's pre-start removes no rule: kube-proxy's still serve");
                List<String> start = unitCommand(unit, "ExecStart");
                assertEquals("run", start.get(0), "ExecStart runs the daemon: " + start);
                List<String> args = new ArrayList<>(substitute(start.subList(1, start.size())));
                args.addAll(List.of("--manifests", manifests.toString()));
                daemon = DaemonProcess.start(node, java -> java, Map.of(), args.toArray(String[]::new));
                boolean ready = daemon.awaitLog("first sync done", Duration.ofSeconds(90));
                assertTrue(ready, "the daemon became ready:\n" + daemon.log());
                List<String> lines = daemon.log().lines().toList();
                int removed = indexOf(lines, "removed kube-proxy's iptables/IPVS-mode leftovers");
                assertTrue(removed >= 0 && removed < indexOf(lines, "first sync done"),
                        "the leftovers went after the tables were programmed, before READY:\n" + daemon.log());
                assertFalse(iptablesNat().contains(SVC), "kube-proxy's rules are gone once the daemon is ready");
            } else if (command.equals("systemctl disable --now nftproxy")) {
                assertTrue(daemon != null && daemon.alive(), "a daemon to stop");
                daemon.close();
                daemon = null;
                assertTrue(kernelTable().contains(WEB), "stopping leaves nftproxy's rules in place");
            } else {
                fail("the guide has a systemctl step this test does not know: " + command);
            }
        }

        private void nftproxy(List<String> args) throws IOException {
            List<String> a = new ArrayList<>(substitute(args));
            boolean dryRun = a.contains("--dry-run");
            if (a.get(0).equals("run")) a.addAll(List.of("--manifests", manifests.toString()));
            a.addAll(List.of("--netns", node.name()));
            String rulesBefore = ruleset(), sysctlsBefore = sysctls();
            CliRun r = CliRun.of(a);
            System.out.println(r.out().indent(2) + r.err().indent(2));
            assertEquals(ExitCodes.OK, r.exit(), "nftproxy " + a + ":\n" + r.out() + r.err());
            if (a.get(0).equals("cleanup")) {
                assertEquals("", kernelTable(), "cleanup deleted nftproxy's table");
                assertTrue(iptablesNat().contains(SVC), "cleanup left kube-proxy's iptables rules alone");
            }
            if (dryRun) {
                assertTrue(r.out().contains("after its first sync the daemon would remove kube-proxy's iptables/IPVS-mode leftovers")
                        && r.out().contains("iptables-nft nat: ") && r.out().contains(SVC), r.out());
                assertTrue(r.out().contains("result     ok; nothing was changed"), r.out());
                assertEquals(rulesBefore, ruleset(), "--dry-run left the ruleset (iptables-nft's tables included) as it was");
                assertEquals(sysctlsBefore, sysctls(), "--dry-run left the conntrack sysctls as they were");
            }
        }

        private void shell(String command) throws IOException {
            KernelNamespace.Result r = node.exec(Duration.ofSeconds(30), null, "sh", "-c", GuideSteps.withoutComment(command));
            System.out.println(r.stdout().lines().limit(5).map(l -> "  " + l).reduce("", (x, y) -> x + y + "\n"));
            Matcher count = Pattern.compile("\\|\\s*grep -c .*#\\s*(\\d+)").matcher(command);
            if (count.find()) {
                assertEquals(count.group(1), r.stdout().strip(), command); // grep -c exits 1 when it counts 0
            } else {
                assertEquals(0, r.exitCode(), command + ": " + r.stderr());
                assertFalse(r.stdout().isBlank(), command + " printed nothing");
            }
        }

        private List<String> substitute(List<String> args) {
            return args.stream().map(w -> w.equals(CONFIG_IN_GUIDE) ? config.toString() : w).toList();
        }

        String iptablesNat() throws IOException {
            return node.execChecked("iptables-nft-save", "-t", "nat").replaceAll("(?m)^#.*\\n", "");
        }

        String kernelTable() throws IOException {
            KernelNamespace.Result r = node.exec(Duration.ofSeconds(30), null, "nft", "list", "table", "ip", "kube-proxy");
            return r.ok() ? r.stdout() : "";
        }

        private String ruleset() throws IOException {
            // iptables-nft's rules count packets, and the load keeps sending: counters are not a change.
            return node.execChecked("nft", "list", "ruleset").replaceAll("counter packets \\d+ bytes \\d+", "counter");
        }

        private String sysctls() throws IOException {
            return node.execChecked("sh", "-c", "grep -H . /proc/sys/net/netfilter/nf_conntrack_* 2>/dev/null | grep -v nf_conntrack_count");
        }

        @Override public void close() throws IOException {
            if (daemon != null) daemon.close();
        }
    }

    /** One datagram to the UDP Service from the flow's socket; the backend's name from its answer, or why none came. */
    private static String udpAsk(DatagramChannel udp) throws Exception {
        udp.send(ByteBuffer.wrap("q".getBytes(StandardCharsets.UTF_8)), new InetSocketAddress(DNS_IP, DNS));
        ByteBuffer in = ByteBuffer.allocate(512);
        udp.configureBlocking(false);
        long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        while (udp.receive(in) == null) {
            if (System.nanoTime() > deadline) return "no answer within 2 s";
            Thread.sleep(5);
        }
        return new String(in.array(), 0, in.position(), StandardCharsets.UTF_8).split(" ")[0];
    }

    /** The command after {@code KEY=} in the unit, from the word {@code .../nftproxy} on (its arguments only). */
    static List<String> unitCommand(String unit, String key) {
        for (String line : unit.lines().toList()) {
            if (line.startsWith(key + "=")) {
                List<String> words = GuideSteps.words(line.substring(key.length() + 1));
                for (int i = 0; i < words.size(); i++) if (words.get(i).endsWith("/nftproxy")) return words.subList(i + 1, words.size());
            }
        }
        throw new AssertionError("no " + key + " running nftproxy in " + UNIT);
    }

    private static int indexOf(List<String> lines, String needle) {
        for (int i = 0; i < lines.size(); i++) if (lines.get(i).contains(needle)) return i;
        return -1;
    }

    /** A pod connecting to the ClusterIP again and again: bounded in count (3000) and time (240 s). */
    static final class Load {
        private final List<Probe.Outcome> outcomes = Collections.synchronizedList(new ArrayList<>());
        private final List<String> marks = Collections.synchronizedList(new ArrayList<>());
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread thread;

        private Load(Probe probe) {
            thread = new Thread(() -> {
                long deadline = System.nanoTime() + Duration.ofSeconds(240).toNanos();
                for (int i = 0; i < 3000 && running.get() && System.nanoTime() < deadline; i++) {
                    try {
                        outcomes.add(probe.tcp(WEB, HTTP));
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        outcomes.add(new Probe.Outcome(Probe.Kind.ERROR, null, null, 0, e.toString()));
                    }
                }
            }, "migration-load");
        }

        static Load start(Probe probe) {
            Load l = new Load(probe);
            l.thread.start();
            return l;
        }

        void mark(String what) { marks.add(what + "=" + outcomes.size()); }

        int countBefore(String what) {
            for (String m : marks) if (m.startsWith(what + "=")) return Integer.parseInt(m.substring(what.length() + 1));
            return -1;
        }

        String marks() { return String.join(", ", marks); }

        List<Probe.Outcome> outcomes() { return List.copyOf(outcomes); }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join(30_000);
        }
    }
}
