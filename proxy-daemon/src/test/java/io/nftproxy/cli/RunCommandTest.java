package io.nftproxy.cli;

import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.nft.FakeNftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import io.nftproxy.config.ConntrackSettings;
import io.nftproxy.node.ConntrackSysctls;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code nftproxy run} with the kernel replaced by {@link FakeNftClient} through the client seam: exit codes and
 * messages. The same command against a real kernel is in integration-tests (RunOnceKernelTest).
 */
class RunCommandTest {
    record Run(int exit, String out, String err) {}

    private static Run run(RunCommand.ClientFactory clients, String... extra) {
        List<String> args = new ArrayList<>(List.of("--manifests", RenderCommandTest.EXAMPLES.toString(),
                "--hostname-override", "k8s-node-1", "--cluster-cidr", "172.20.0.0/16,fd00:172:20::/64"));
        args.addAll(List.of(extra));
        return runArgs(clients, args);
    }

    /**
     * The conntrack sysctls of a fresh network namespace on a 2-CPU host, in memory: nf_conntrack_max read-only (as
     * the kernel offers it outside the initial namespace) unless {@code hostNamespace}. No test here touches the
     * machine's sysctls.
     */
    static class FakeSysctls implements ConntrackSysctls.Access {
        final Map<String, Long> values = new HashMap<>(Map.of("nf_conntrack_max", 262144L, "hashsize", 4096L,
                "nf_conntrack_tcp_timeout_established", 432000L, "nf_conntrack_tcp_timeout_close_wait", 60L,
                "nf_conntrack_tcp_be_liberal", 0L, "nf_conntrack_udp_timeout", 30L, "nf_conntrack_udp_timeout_stream", 120L));
        final List<String> writes = new ArrayList<>();
        boolean hostNamespace;

        @Override public long read(String name) { return values.get(name); }

        @Override public void write(String name, long value) throws java.io.IOException {
            writes.add(name + "=" + value);
            values.put(name, value);
        }

        @Override public boolean writable(String name) { return hostNamespace || !Set.of("nf_conntrack_max", "hashsize").contains(name); }
    }

    private static FakeSysctls sysctls = new FakeSysctls();
    /** The namespaces the iptables-mode cleanup was asked for: never the real kernel's from here. */
    private static final List<String> leftoverRemovals = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The namespaces --dry-run looked for them in; it finds one chain. */
    private static final List<String> leftoverLookups = new java.util.concurrent.CopyOnWriteArrayList<>();

    private static Run runArgs(RunCommand.ClientFactory clients, List<String> args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new RunCommand(clients, netns -> sysctls, netns -> {
            leftoverRemovals.add(String.valueOf(netns));
            return io.nftproxy.node.OtherModeLeftovers.Outcome.NONE;
        }, netns -> {
            leftoverLookups.add(String.valueOf(netns));
            return new io.nftproxy.node.OtherModeLeftovers.Outcome(List.of(new io.nftproxy.node.OtherModeLeftovers.Removed(
                    "iptables-nft", "nat", List.of("KUBE-SERVICES"))), List.of());
        }));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    private static RunCommand.ClientFactory fake(FakeNftClient f) {
        return (mode, netns, childStarted) -> new NftClients.Selection(f, "fake");
    }

    /**
     * A kubeconfig that cannot be read or parsed is the one API problem that ends the start: only an operator fixes
     * it, so exit 2, which the unit does not restart. (An API server that cannot be used is retried instead: the
     * integration tests' ApiUnusableAtStartTest.) Bounded: were the file accepted, the daemon would run on.
     */
    @Test
    void anUnreadableOrMalformedKubeconfigExitsTwo() throws Exception {
        Path tmp = dir;
        Path malformed = Files.writeString(tmp.resolve("kubeconfig"), "clusters: [ {name: a, cluster: {server: \n");
        for (Path kubeconfig : List.of(tmp.resolve("absent"), malformed)) {
            FakeNftClient f = new FakeNftClient();
            Run r = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(30), () -> runArgs(fake(f),
                    List.of("--kubeconfig", kubeconfig.toString(), "--hostname-override", "k8s-node-1",
                            "--healthz-bind-address", "127.0.0.1:0", "--metrics-bind-address", "127.0.0.1:0")));
            assertEquals(ExitCodes.USAGE, r.exit(), kubeconfig + ": " + r.err());
            assertTrue(r.err().startsWith("nftproxy: cannot start: "), r.err());
            assertNull(f.dump(IpFamily.IPV4), "nothing applied");
        }
    }

    @Test
    void onceAppliesBothTablesAndExitsZero() {
        FakeNftClient f = new FakeNftClient();
        Run r = run(fake(f), "--once");
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        assertTrue(r.out().contains("applied table ip kube-proxy: converge sync"), r.out());
        assertTrue(r.out().contains("applied table ip6 kube-proxy: converge sync"), r.out());
        for (IpFamily fam : IpFamily.values()) assertNotNull(f.dump(fam), fam.toString());
    }

    /**
     * Without --once the daemon starts, and it opens the host's real nftables (not the client seam), so a unit test
     * may only reach it with a configuration it refuses before touching the kernel: a daemon started here would
     * program this machine's own namespace and never return.
     */
    @Test
    void theDaemonRefusesAnInvalidConfigurationBeforeTouchingTheKernel() {
        FakeNftClient f = new FakeNftClient();
        Run r = run(fake(f), "--min-sync-period", "soon");
        assertEquals(ExitCodes.USAGE, r.exit());
        assertTrue(r.err().contains("--min-sync-period: invalid value \"soon\""), r.err());
        r = run(fake(f), "--kubeconfig", "/nonexistent/kubeconfig");
        assertEquals(ExitCodes.USAGE, r.exit());
        assertTrue(r.err().contains("either a manifest directory or a kubeconfig, not both"), r.err());
        r = run(fake(f), "--logging-format", "xml");
        assertEquals(ExitCodes.USAGE, r.exit());
        assertTrue(r.err().contains("logging.format (--logging-format): invalid value \"xml\"; allowed: text or json"), r.err());
        r = run(fake(f), "--v=-1");
        assertEquals(ExitCodes.USAGE, r.exit());
        assertTrue(r.err().contains("logging.verbosity (-v): invalid value \"-1\""), r.err());
        r = run(fake(f), "--healthz-bind-address", "localhost:10256");
        assertEquals(ExitCodes.USAGE, r.exit());
        assertTrue(r.err().contains("no host names"), r.err());
        assertNull(f.dump(IpFamily.IPV4));
    }

    @Test
    void aRefusedTransactionExitsFiveWithTheReason() {
        FakeNftClient f = new FakeNftClient().failWhen(tx -> true);
        Run r = run(fake(f), "--once");
        assertEquals(ExitCodes.SYNC_FAILED, r.exit(), r.err());
        assertTrue(r.err().contains("nftproxy: table ip kube-proxy not applied: kind=FAILED"), r.err());
        assertTrue(r.err().contains(FakeNftClient.INJECTED_ERROR), r.err());
        assertNull(f.dump(IpFamily.IPV4));
    }

    @Test
    void permissionDeniedExitsFour() {
        FakeNftClient f = new FakeNftClient().failWhen(tx -> true, "Operation not permitted");
        Run r = run(fake(f), "--once");
        assertEquals(ExitCodes.PERMISSION_DENIED, r.exit(), r.err());
        assertTrue(r.err().contains("permission denied"), r.err());
    }

    @Test
    void noUsableNftExitsThree() {
        Run r = run((mode, netns, childStarted) -> {
            throw new NftException(NftException.Kind.UNSUPPORTED, "libnftables.so.1 cannot be loaded", null, null, 0);
        }, "--once", "--nft-mode", "library");
        assertEquals(ExitCodes.NFT_UNAVAILABLE, r.exit(), r.err());
        assertTrue(r.err().contains("nftproxy: nft unavailable: libnftables.so.1 cannot be loaded"), r.err());
    }

    @Test
    void aMissingManifestDirectoryExitsOne() {
        Run r = runArgs(fake(new FakeNftClient()), List.of("--once", "--manifests", "/nonexistent-nftp-dir",
                "--hostname-override", "k8s-node-1"));
        assertEquals(ExitCodes.INPUT_UNREADABLE, r.exit(), r.err());
    }

    @Test
    void aBadNftModeIsAUsageError() {
        Run r = run(fake(new FakeNftClient()), "--once", "--nft-mode", "kernel");
        assertEquals(ExitCodes.USAGE, r.exit(), r.err());
    }

    @org.junit.jupiter.api.io.TempDir Path dir;

    /** A kube-proxy command line for nftables mode carries over: its spellings at the values nftproxy honours. */
    @Test
    void kubeProxysSpellingsAreAccepted() {
        FakeNftClient f = new FakeNftClient();
        Run r = run(fake(f), "--once", "--proxy-mode=nftables", "--detect-local-mode=ClusterCIDR", "--v=2",
                "--logging-format=text", "--conntrack-max-per-core=0", "--conntrack-min=131072",
                "--conntrack-tcp-timeout-established=0s", "--conntrack-tcp-timeout-close-wait=0s",
                "--conntrack-udp-timeout=0", "--conntrack-udp-timeout-stream=0s", "--conntrack-tcp-be-liberal=false",
                "--iptables-min-sync-period=1s", "--iptables-sync-period=30s");
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        assertNotNull(f.dump(IpFamily.IPV4));
        for (String v : List.of("-v", "--v")) assertEquals(ExitCodes.OK, run(fake(new FakeNftClient()), "--once", v, "4").exit());
    }

    /**
     * kube-proxy's flags that change nothing here are accepted at any value, each with one WARN naming the flag and
     * what it does not do here: a kube-proxy or distribution unit's command line runs unchanged.
     */
    @Test
    void kubeProxysHarmlessFlagsAreAcceptedWithOneWarningEach() {
        List<String> harmless = List.of("--oom-score-adj=-999", "--oom-score-adj=500", "--profiling", "--profiling=false",
                "--feature-gates=Foo=true", "--kube-api-qps=5", "--kube-api-burst", "10", "--kube-api-content-type=application/json",
                "--config-sync-period=15m", "--iptables-masquerade-bit=13", "--iptables-localhost-nodeports=false",
                "--ipvs-scheduler=rr", "--ipvs-strict-arp", "--vmodule=proxier=4", "--logtostderr=true",
                "--show-hidden-metrics-for-version=1.35", "--bind-address-hard-fail=false");
        Run r = run(fake(new FakeNftClient()), concat(List.of("--once"), harmless));
        assertEquals(ExitCodes.OK, r.exit(), r.err());

        RunCommand cmd = new RunCommand();
        CommandLine cl = new CommandLine(cmd);
        CommandLine.ParseResult pr = cl.parseArgs(concat(List.of("--manifests", RenderCommandTest.EXAMPLES.toString(),
                "--hostname-override", "k8s-node-1"), harmless));
        List<io.nftproxy.config.ConfigFile.Note> notes = assertDoesNotThrow(() -> RunConfiguration.of(cmd, pr)).notes();
        Map<String, Long> warnings = new HashMap<>();
        for (var n : notes) if (n.level() == org.slf4j.event.Level.WARN) warnings.merge(n.field(), 1L, Long::sum);
        assertEquals(Set.of("--oom-score-adj", "--profiling", "--feature-gates", "--kube-api-qps", "--kube-api-burst",
                "--kube-api-content-type", "--config-sync-period", "--iptables-masquerade-bit", "--iptables-localhost-nodeports",
                "--ipvs-scheduler", "--ipvs-strict-arp", "--vmodule", "--logtostderr", "--show-hidden-metrics-for-version",
                "--bind-address-hard-fail"), warnings.keySet());
        assertTrue(warnings.values().stream().allMatch(c -> c == 1), "one warning per flag, even given twice: " + warnings);
        assertTrue(notes.stream().anyMatch(n -> n.toString().equals("--oom-score-adj: ignored: the daemon does not change its "
                + "own OOM score (kube-proxy sets -999 on itself); under systemd set OOMScoreAdjust= in the unit")), notes.toString());
        assertTrue(notes.stream().anyMatch(n -> n.toString().equals("--profiling: ignored: nftproxy serves no /debug/pprof endpoints")), notes.toString());
        // --bind-address-hard-fail=true is what nftproxy does anyway: nothing to say.
        CommandLine.ParseResult hardFail = new CommandLine(new RunCommand()).parseArgs("--manifests", "x", "--bind-address-hard-fail");
        assertEquals(Boolean.TRUE, ((RunCommand) hardFail.commandSpec().userObject()).kubeProxyFlags.bindAddressHardFail);
    }

    /** Every flag with a reason to be ignored is an option of run, hidden from --help, and every hidden kube-proxy flag has a reason. */
    @Test
    void theIgnoredFlagsAndTheirReasonsAreTheSameSet() {
        CommandLine.Model.CommandSpec run = new CommandLine(new RunCommand()).getCommandSpec();
        Set<String> hidden = new java.util.TreeSet<>();
        for (CommandLine.Model.OptionSpec o : run.options()) if (o.hidden()) hidden.addAll(List.of(o.names()));
        hidden.remove("--netns");
        assertEquals(new java.util.TreeSet<>(KubeProxyFlags.IGNORED.keySet()), hidden);
    }

    /** kube-proxy's deprecated --healthz-port and --metrics-port set the port of the bind address; 0 turns the server off. */
    @Test
    void deprecatedPortFlagsSetThePortOfTheBindAddress() {
        RunCommand cmd = new RunCommand();
        CommandLine.ParseResult pr = new CommandLine(cmd).parseArgs("--manifests", RenderCommandTest.EXAMPLES.toString(),
                "--hostname-override", "k8s-node-1", "--healthz-port=10300", "--metrics-port=0");
        io.nftproxy.config.ProxyConfig c = assertDoesNotThrow(() -> RunConfiguration.of(cmd, pr)).config();
        assertEquals(new java.net.InetSocketAddress("0.0.0.0", 10300), c.healthzBindAddress());
        assertEquals(0, c.metricsBindAddress().getPort());
        RunCommand both = new RunCommand();
        CommandLine.ParseResult pr2 = new CommandLine(both).parseArgs("--manifests", RenderCommandTest.EXAMPLES.toString(),
                "--hostname-override", "k8s-node-1", "--healthz-port=10300", "--healthz-bind-address=127.0.0.1:10400");
        assertEquals(10400, assertDoesNotThrow(() -> RunConfiguration.of(both, pr2)).config().healthzBindAddress().getPort());
    }

    private static String[] concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all.toArray(String[]::new);
    }

    /** What nftproxy would not honour is refused by name, with the reason, by the daemon and --once alike. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--proxy-mode=iptables | --proxy-mode: invalid value \"iptables\"; allowed: nftables (nftproxy implements kube-proxy's nftables mode only)",
            "--detect-local-mode=PodCIDR | detectLocalMode (--detect-local-mode): invalid value \"PodCIDR\"; allowed: ClusterCIDR, NodeCIDR, BridgeInterface, InterfaceNamePrefix",
            "--detect-local-mode=BridgeInterface | detectLocal.bridgeInterface (--pod-bridge-interface): invalid value \"\"",
            "--detect-local-mode=InterfaceNamePrefix --pod-interface-name-prefix=veth* | detectLocal.interfaceNamePrefix (--pod-interface-name-prefix): invalid value \"veth*\"",
            "--conntrack-max-per-core=-1 | conntrack.maxPerCore (--conntrack-max-per-core): invalid value \"-1\"",
            "--conntrack-tcp-timeout-established=-1h | --conntrack-tcp-timeout-established: invalid value \"-1h\"",
            "--bind-address=node-1 | --bind-address: invalid value \"node-1\"",
            "--master=192.168.10.1:6443 | --master: invalid value \"192.168.10.1:6443\"; allowed: the API server's URL, such as https://192.168.10.1:6443",
            "--master=https://192.168.10.1:6443 | --master: invalid value \"https://192.168.10.1:6443\"; allowed: not with --manifests",
            "--healthz-port=70000 | --healthz-port: invalid value \"70000\"; allowed: a port 0..65535",
            "--min-sync-period=1x | --min-sync-period: invalid value \"1x\"",
            "--nodeport-addresses=primary,10.0.0.0/8 | nodePortAddresses (--nodeport-addresses): invalid value \"primary,10.0.0.0/8\"",
            "--node-ip=192.168.10.1,192.168.10.2 | --node-ip: invalid value",
            "--node-ip=127.0.0.1 | --node-ip: invalid value \"127.0.0.1\"; allowed: a unicast address: not unspecified, loopback or multicast",
    })
    void whatDoesNotApplyIsRefusedWithTheReason(String flag, String message) {
        for (boolean once : List.of(true, false)) {
            FakeNftClient f = new FakeNftClient();
            List<String> flags = List.of(flag.split(" "));
            List<String> args = new ArrayList<>(once ? List.of("--once") : List.of());
            args.addAll(flags);
            Run r = run(fake(f), args.toArray(String[]::new));
            assertEquals(ExitCodes.USAGE, r.exit(), flag + (once ? " --once: " : ": ") + r.err());
            assertTrue(r.err().contains(message), r.err());
            assertNull(f.dump(IpFamily.IPV4));
        }
    }

    /**
     * --init-only sets the conntrack sysctls as kube-proxy does (kube-proxy's defaults: 32768 per CPU but at least
     * 131072, 24h, 1h) and exits without touching nftables; the namespace's read-only nf_conntrack_max is reported
     * and left alone, and with it the host-wide hash size.
     */
    @Test
    void initOnlySetsTheConntrackSysctlsAndTouchesNothingElse() {
        sysctls = new FakeSysctls();
        FakeNftClient f = new FakeNftClient();
        leftoverRemovals.clear();
        Run r = run(fake(f), "--init-only");
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        assertEquals(List.of(), leftoverRemovals, "unlike kube-proxy's, --init-only leaves the iptables-mode rules: they serve "
                + "the node until the daemon's first sync");
        assertNull(f.dump(IpFamily.IPV4));
        assertEquals(List.of("nf_conntrack_tcp_timeout_established=86400", "nf_conntrack_tcp_timeout_close_wait=3600"), sysctls.writes);
        assertTrue(r.out().contains("nf_conntrack_max left at 262144, not " + Math.max(131072, 32768L * ConntrackSysctls.cpus())), r.out());
        // A second start finds them set and writes nothing: what lets the daemon run with CAP_NET_ADMIN alone.
        sysctls.writes.clear();
        assertEquals(ExitCodes.OK, run(fake(f), "--init-only").exit());
        assertEquals(List.of(), sysctls.writes);
        assertEquals(ExitCodes.USAGE, run(fake(f), "--init-only", "--proxy-mode=ipvs").exit());
    }

    /**
     * --dry-run reports the configuration, the source, nft, the sysctls a start would set and the leftovers it would
     * remove, and changes nothing: no transaction, no sysctl written, no leftover removed. It takes no one-shot step.
     */
    @Test
    void dryRunSaysWhatAStartWouldChangeAndChangesNothing() {
        sysctls = new FakeSysctls();
        FakeNftClient f = new FakeNftClient();
        leftoverRemovals.clear();
        leftoverLookups.clear();
        Run r = run(fake(f), "--dry-run");
        assertEquals(ExitCodes.OK, r.exit(), r.out() + r.err());
        assertNull(f.dump(IpFamily.IPV4));
        assertNull(f.dump(IpFamily.IPV6));
        assertEquals(List.of(), sysctls.writes);
        assertEquals(List.of(), leftoverRemovals);
        assertEquals(List.of(NetworkNamespace.host().toString()), leftoverLookups);
        for (String line : List.of("config     ok: no --config, node k8s-node-1",
                "source     ok: --manifests " + RenderCommandTest.EXAMPLES,
                "nft        ok: ",
                "sysctl     would set nf_conntrack_tcp_timeout_established=86400 (now 432000)",
                "sysctl     would set nf_conntrack_tcp_timeout_close_wait=3600 (now 60)",
                "sysctl     nf_conntrack_max left at 262144",
                "leftovers  after its first sync the daemon would remove kube-proxy's iptables/IPVS-mode leftovers, 1 removed: iptables-nft nat: KUBE-SERVICES",
                "result     ok; nothing was changed")) {
            assertTrue(r.out().contains(line), line + " in:\n" + r.out());
        }
        Run noNft = run((mode, netns, childStarted) -> { throw new java.io.IOException("no nft here"); }, "--dry-run");
        assertEquals(ExitCodes.NFT_UNAVAILABLE, noNft.exit(), noNft.out());
        assertTrue(noNft.out().contains("nft        FAILED: nftproxy: cannot open nft: no nft here")
                && noNft.out().contains("result     FAILED (exit 3); nothing was changed"), noNft.out());
        assertTrue(noNft.out().contains("sysctl     would set"), "the other checks still run: " + noNft.out());
        for (String oneShot : List.of("--init-only", "--cleanup", "--once")) {
            Run both = run(fake(f), "--dry-run", oneShot);
            assertEquals(ExitCodes.USAGE, both.exit(), oneShot);
            assertTrue(both.err().contains("--dry-run checks what the daemon's start would do"), both.err());
        }
        assertEquals(List.of(), sysctls.writes);
        assertEquals(List.of(), leftoverRemovals);
        assertNull(f.dump(IpFamily.IPV4));
    }

    /** Flags and file give real values; 0 leaves a sysctl alone; in the host's namespace the hash size follows the limit. */
    @Test
    void conntrackSettingsFromFlagsAndFileAreSet() throws Exception {
        sysctls = new FakeSysctls();
        sysctls.hostNamespace = true;
        Path cfg = dir.resolve("conntrack.yaml");
        Files.writeString(cfg, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                + "conntrack: {maxPerCore: 100000, min: 0, tcpCloseWaitTimeout: 0s, udpTimeout: 45s}\n");
        Run r = run(fake(new FakeNftClient()), "--init-only", "--config", cfg.toString(), "--conntrack-tcp-timeout-established=2h",
                "--conntrack-tcp-be-liberal", "--conntrack-udp-timeout-stream=3m");
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        long max = 100000L * ConntrackSysctls.cpus();
        assertEquals(List.of("nf_conntrack_max=" + max, "hashsize=" + max / 4, "nf_conntrack_tcp_timeout_established=7200",
                "nf_conntrack_tcp_be_liberal=1", "nf_conntrack_udp_timeout=45", "nf_conntrack_udp_timeout_stream=180"), sysctls.writes);
        // The hash size is root's alone: a daemon with CAP_NET_ADMIN that cannot raise it warns and starts.
        sysctls = new FakeSysctls() {
            @Override public void write(String name, long value) throws java.io.IOException {
                if (name.equals("hashsize")) throw new java.nio.file.AccessDeniedException("hashsize");
                super.write(name, value);
            }
        };
        sysctls.hostNamespace = true;
        Run hash = run(fake(new FakeNftClient()), "--init-only");
        assertEquals(ExitCodes.OK, hash.exit(), hash.err());
        assertTrue(hash.out().contains("conntrack hash size left at 4096, not " + ConntrackSysctls.max(ConntrackSettings.DEFAULT, ConntrackSysctls.cpus()) / 4), hash.out());
        sysctls = new FakeSysctls();
        assertEquals(ExitCodes.OK, run(fake(new FakeNftClient()), "--init-only", "--conntrack-max-per-core=0",
                "--conntrack-tcp-timeout-established=0", "--conntrack-tcp-timeout-close-wait=0").exit());
        assertEquals(List.of(), sysctls.writes);
    }

    /** kube-proxy's --write-config-to: flags and file together, written out; read back with --config, the same file again. */
    @Test
    void writeConfigToWritesWhatConfigReadsBack() throws Exception {
        Path cfg = dir.resolve("in.yaml"), first = dir.resolve("first.yaml"), second = dir.resolve("second.yaml");
        Files.writeString(cfg, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                + "conntrack: {maxPerCore: 0}\nnftables: {masqueradeBit: 3}\n");
        FakeNftClient f = new FakeNftClient();
        sysctls = new FakeSysctls();
        Run r = run(fake(f), "--config", cfg.toString(), "--detect-local-mode=BridgeInterface", "--pod-bridge-interface=cbr0",
                "--conntrack-tcp-timeout-established=3h", "--write-config-to", first.toString());
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        assertNull(f.dump(IpFamily.IPV4), "nothing programmed");
        assertEquals(List.of(), sysctls.writes, "no sysctl set");
        String text = Files.readString(first);
        for (String s : List.of("masqueradeBit: 3", "maxPerCore: 0", "tcpEstablishedTimeout: \"3h0m0s\"", "bridgeInterface: \"cbr0\"",
                "detectLocalMode: \"BridgeInterface\"", "hostnameOverride: \"k8s-node-1\"")) {
            assertTrue(text.contains(s), s + " in\n" + text);
        }
        // Only the config file's and the command line's source flags (run() adds --manifests) are given again.
        assertEquals(ExitCodes.OK, run(fake(f), "--config", first.toString(), "--write-config-to", second.toString()).exit());
        assertEquals(text, Files.readString(second));
    }

    /**
     * issue 24/26: the table layout is a setting: set in the file it takes effect, an explicit flag wins, and
     * --write-config-to writes it so that --config reads the same back.
     */
    @Test
    void theTableLayoutFromTheConfigFileTakesEffectAndRoundTrips() throws Exception {
        String helloChain = "service-VSI2YVQZ-demo/hello/tcp/http";
        Path cfg = dir.resolve("layout.yaml"), written = dir.resolve("written.yaml"), again = dir.resolve("again.yaml");
        Files.writeString(cfg, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                + "nftproxy:\n  tableLayout: fast\n  refuseExternalIPOverlaps: true\n");
        FakeNftClient byDefault = new FakeNftClient();
        assertEquals(ExitCodes.OK, run(fake(byDefault), "--once").exit());
        assertNull(byDefault.dump(IpFamily.IPV4).chain(helloChain), "flat by default: hello is elements only");
        FakeNftClient fromFile = new FakeNftClient();
        Run r = run(fake(fromFile), "--once", "--config", cfg.toString());
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        assertNotNull(fromFile.dump(IpFamily.IPV4).chain(helloChain), "fast from the file: hello has its chain");
        FakeNftClient flagWins = new FakeNftClient();
        assertEquals(ExitCodes.OK, run(fake(flagWins), "--once", "--config", cfg.toString(), "--table-layout", "flat").exit());
        assertNull(flagWins.dump(IpFamily.IPV4).chain(helloChain), "the flag given explicitly wins over the file");

        assertEquals(ExitCodes.OK, run(fake(new FakeNftClient()), "--config", cfg.toString(), "--write-config-to", written.toString()).exit());
        String text = Files.readString(written);
        assertTrue(text.contains("nftproxy:\n  refuseExternalIPOverlaps: true\n  tableLayout: \"fast\"\n"), text);
        assertEquals(ExitCodes.OK, run(fake(new FakeNftClient()), "--config", written.toString(), "--write-config-to", again.toString()).exit());
        assertEquals(text, Files.readString(again));
        FakeNftClient fromWritten = new FakeNftClient();
        assertEquals(ExitCodes.OK, run(fake(fromWritten), "--once", "--config", written.toString()).exit());
        assertEquals(fromFile.dump(IpFamily.IPV4), fromWritten.dump(IpFamily.IPV4));
    }

    @Test
    void onceAppliesTheConfigFile() throws Exception {
        Path cfg = dir.resolve("config.yaml");
        Files.writeString(cfg, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                + "nftables:\n  masqueradeBit: 3\n");
        FakeNftClient f = new FakeNftClient();
        Run r = run(fake(f), "--once", "--config", cfg.toString());
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        String script = script(f);
        assertTrue(script.contains("mark or 0x8 ") && !script.contains("0x4000"), script);
        // The flag given explicitly wins over the file, as for the daemon.
        f = new FakeNftClient();
        r = run(fake(f), "--once", "--config", cfg.toString(), "--masquerade-bit", "14");
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        assertTrue(script(f).contains("mark or 0x4000 "), script(f));
    }

    /** kubeadm's file names its kubeconfig; --manifests given on the command line is the source all the same. */
    @Test
    void onceAcceptsKubeadmsGeneratedConfigurationUnchanged() throws Exception {
        Path kubeadm = Path.of(RunCommandTest.class.getResource("/kubeadm-v1.36-kube-proxy-config.conf").toURI());
        FakeNftClient f = new FakeNftClient();
        Run r = run(fake(f), "--once", "--config", kubeadm.toString());
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        assertTrue(script(f).contains("mark or 0x4000 "), "kube-proxy's default masquerade bit");
        // Both sources as flags are still a contradiction.
        r = run(fake(new FakeNftClient()), "--once", "--config", kubeadm.toString(), "--kubeconfig", "/etc/nftproxy/kubeconfig");
        assertEquals(ExitCodes.USAGE, r.exit(), r.err());
        assertTrue(r.err().contains("either a manifest directory or a kubeconfig, not both"), r.err());
    }

    /** The last transaction as the nft script it is. */
    private static String script(FakeNftClient f) {
        return f.lastTransaction().script(io.nftproxy.nft.Capabilities.baseline());
    }

    /** Each detector from flags reaches the tables; NodeCIDR takes the podCIDRs of the example's Node object. */
    @Test
    void theLocalTrafficDetectorFromTheFlagsReachesTheTables() {
        assertTrue(ipv4Script("--detect-local-mode=InterfaceNamePrefix", "--pod-interface-name-prefix=veth")
                .contains("add rule ip kube-proxy services ip daddr @cluster-ips iifname != \"veth*\" mark set mark or 0x4000"));
        assertTrue(ipv4Script("--detect-local-mode=BridgeInterface", "--pod-bridge-interface=cbr0").contains("iifname != \"cbr0\""));
        String nodeCidr = ipv4Script("--detect-local-mode=NodeCIDR");
        assertTrue(nodeCidr.contains("ip daddr @cluster-ips ip saddr != 172.20.211.0/24 mark set"), nodeCidr);
        assertTrue(!nodeCidr.contains("172.20.0.0/16"), "not the --cluster-cidr: " + nodeCidr);
    }

    /** The ip table that run --once applied with these flags, as the script that creates it. */
    private String ipv4Script(String... flags) {
        FakeNftClient f = new FakeNftClient();
        List<String> args = new ArrayList<>(List.of("--once"));
        args.addAll(List.of(flags));
        Run r = run(fake(f), args.toArray(String[]::new));
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        return io.nftproxy.nft.Transaction.creating(f.dump(IpFamily.IPV4)).script(io.nftproxy.nft.Capabilities.baseline());
    }

    @Test
    void onceRefusesABadConfigFile() throws Exception {
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nnftables:\n  masqueradeBit: 40\n");
        FakeNftClient f = new FakeNftClient();
        Run r = run(fake(f), "--once", "--config", bad.toString());
        assertEquals(ExitCodes.USAGE, r.exit(), r.err());
        assertTrue(r.err().contains("nftproxy: invalid configuration: nftables.masqueradeBit (--masquerade-bit): invalid value \"40\""), r.err());
        assertNull(f.dump(IpFamily.IPV4));
        for (Path unreadable : List.of(dir.resolve("missing.yaml"), dir)) {
            r = run(fake(f), "--once", "--config", unreadable.toString());
            assertEquals(ExitCodes.USAGE, r.exit(), r.err());
            assertTrue(r.err().contains("--config " + unreadable + ": cannot be read: "
                    + (unreadable.equals(dir) ? "is a directory" : "no such file")), r.err());
        }
        assertNull(f.dump(IpFamily.IPV4));
    }

    /**
     * Everything wrong in one run: the file's fields, the flags, and the host name, which used to come only once
     * the rest was fixed (issue 24).
     */
    @Test
    void everyProblemOfTheFileAndTheFlagsIsReportedInOneRun() throws Exception {
        Path cfg = dir.resolve("bad.yaml");
        Files.writeString(cfg, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                + "nftables: {syncPeriod: soon}\nmode: 5\n");
        FakeNftClient f = new FakeNftClient();
        Run r = runArgs(fake(f), List.of("--once", "--manifests", RenderCommandTest.EXAMPLES.toString(), "--config", cfg.toString(),
                "--hostname-override", "Not_A_Name", "--min-sync-period", "xx", "--healthz-bind-address", "localhost:1",
                "--conntrack-udp-timeout", "later", "--logging-format", "xml"));
        assertEquals(ExitCodes.USAGE, r.exit(), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        for (String problem : List.of("nftables.syncPeriod: invalid value \"soon\"", "mode: invalid value \"5\"; allowed: a string",
                "--min-sync-period: invalid value \"xx\"", "--healthz-bind-address: invalid value \"localhost:1\"",
                "--conntrack-udp-timeout: invalid value \"later\"", "logging.format (--logging-format): invalid value \"xml\"",
                "hostnameOverride (--hostname-override): invalid value \"Not_A_Name\"")) {
            assertTrue(r.err().contains(problem), problem + " in " + r.err());
        }
        assertNull(f.dump(IpFamily.IPV4));
    }

    /** A file that does not parse is one problem among the flags', named with its line and column. */
    @Test
    void aConfigFileThatDoesNotParseIsReportedWithTheFlagsProblems() throws Exception {
        Path cfg = dir.resolve("tab.yaml");
        Files.writeString(cfg, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nnftables:\n\tsyncPeriod: 1s\n");
        Run r = runArgs(fake(new FakeNftClient()), List.of("--once", "--manifests", RenderCommandTest.EXAMPLES.toString(),
                "--config", cfg.toString(), "--hostname-override", "Not_A_Name"));
        assertEquals(ExitCodes.USAGE, r.exit(), r.err());
        assertEquals("nftproxy: invalid configuration: --config " + cfg + ": a tab character at line 4, column 1: YAML indents "
                + "with spaces; hostnameOverride (--hostname-override): invalid value \"Not_A_Name\"; allowed: "
                + "a DNS-1123 subdomain (at most 253 bytes)", r.err().strip());
    }

    @Test
    void onceWithoutManifestsSaysSo() {
        Run r = runArgs(fake(new FakeNftClient()), List.of("--once", "--hostname-override", "k8s-node-1"));
        assertEquals(ExitCodes.USAGE, r.exit(), r.err());
        assertTrue(r.err().contains("--once applies the tables from a directory: give --manifests DIR"), r.err());
    }

    /** One rule, one message: a bad value from a flag and the same from --config are refused in the same words. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--masquerade-bit=40 | nftables: {masqueradeBit: 40}",
            "--nodeport-addresses=primary,10.0.0.0/8 | nodePortAddresses: [primary, 10.0.0.0/8]",
            "--nodeport-addresses=eth0 | nodePortAddresses: [eth0]",
            "--cluster-cidr=10.0.0.0/8,10.1.0.0/16 | clusterCIDR: 10.0.0.0/8,10.1.0.0/16",
            "--min-sync-period=2m | nftables: {minSyncPeriod: 2m}",
            "--conntrack-max-per-core=-1 | conntrack: {maxPerCore: -1}",
            "--conntrack-min=-5 | conntrack: {min: -5}",
            "--detect-local-mode=BridgeInterface | detectLocalMode: BridgeInterface",
            "--detect-local-mode=Pods | detectLocalMode: Pods",
            "--v=-1 | logging: {verbosity: -1}",
            "--logging-format=xml | logging: {format: xml}",
            "--hostname-override=Not_A_Name | hostnameOverride: Not_A_Name",
    })
    void theSameBadValueFromAFlagOrTheFileIsRefusedInTheSameWords(String flag, String field) throws Exception {
        boolean hostname = flag.startsWith("--hostname-override");
        List<String> byFlag = new ArrayList<>(List.of("--once", "--manifests", RenderCommandTest.EXAMPLES.toString(), flag));
        if (!hostname) byFlag.addAll(List.of("--hostname-override", "k8s-node-1"));
        Path cfg = dir.resolve("bad.yaml");
        Files.writeString(cfg, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n" + field + "\n"
                + (hostname ? "" : "hostnameOverride: k8s-node-1\n"));
        List<String> byFile = List.of("--once", "--manifests", RenderCommandTest.EXAMPLES.toString(), "--config", cfg.toString());
        FakeNftClient f = new FakeNftClient();
        Run a = runArgs(fake(f), byFlag);
        Run b = runArgs(fake(f), byFile);
        assertEquals(ExitCodes.USAGE, a.exit(), a.err());
        assertEquals(ExitCodes.USAGE, b.exit(), b.err());
        assertTrue(a.err().startsWith("nftproxy: invalid configuration: ") && a.err().contains(": invalid value "), a.err());
        assertEquals(a.err(), b.err());
        assertNull(f.dump(IpFamily.IPV4));
    }

    /** --nft-mode is the configuration's, and that is what the client is opened with. */
    @Test
    void theNftModeOfTheConfigurationOpensTheClient() {
        List<NftClients.Mode> asked = new ArrayList<>();
        FakeNftClient f = new FakeNftClient();
        Run r = run((mode, netns, childStarted) -> {
            asked.add(mode);
            return new NftClients.Selection(f, "fake");
        }, "--once", "--nft-mode", "exec");
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        assertEquals(List.of(NftClients.Mode.EXEC), asked);
    }
}
