package io.nftproxy.cli;

import io.nftproxy.netlink.nft.FakeNftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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

    private static Run runArgs(RunCommand.ClientFactory clients, List<String> args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new RunCommand(clients));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    private static RunCommand.ClientFactory fake(FakeNftClient f) {
        return (mode, netns) -> new NftClients.Selection(f, "fake");
    }

    @Test
    void onceAppliesBothTablesAndExitsZero() {
        FakeNftClient f = new FakeNftClient();
        Run r = run(fake(f), "--once");
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        assertTrue(r.out().contains("applied table ip kube-proxy: full sync"), r.out());
        assertTrue(r.out().contains("applied table ip6 kube-proxy: full sync"), r.out());
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
        assertTrue(r.err().contains("--logging-format: invalid value \"xml\"; allowed: text or json"), r.err());
        r = run(fake(f), "--v=-1");
        assertEquals(ExitCodes.USAGE, r.exit());
        assertTrue(r.err().contains("-v: invalid value \"-1\""), r.err());
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
        Run r = run((mode, netns) -> {
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

    /** What nftproxy would not honour is refused by name, with the reason, by the daemon and --once alike. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--proxy-mode=iptables | --proxy-mode: invalid value \"iptables\"; allowed: nftables (nftproxy implements kube-proxy's nftables mode only)",
            "--detect-local-mode=NodeCIDR | the NodeCIDR detector is not implemented",
            "--conntrack-max-per-core=65536 | nftproxy sets no conntrack sysctls",
            "--conntrack-min=131072 | only with --conntrack-max-per-core=0",
            "--conntrack-tcp-timeout-established=24h0m0s | --conntrack-tcp-timeout-established: invalid value \"24h0m0s\"",
            "--conntrack-tcp-be-liberal | --conntrack-tcp-be-liberal",
            "--oom-score-adj=-999 | --oom-score-adj: invalid value \"(given)\"; allowed: not given: the daemon does not change its own OOM score",
            "--ipvs-scheduler=rr | kube-proxy's ipvs mode only",
            "--profiling | /debug/pprof",
            "--bind-address=192.168.10.20 | give --node-ip",
            "--pod-bridge-interface=cbr0 | BridgeInterface detector is not implemented",
            "--min-sync-period=1x | --min-sync-period: invalid value \"1x\"",
            "--nodeport-addresses=primary,10.0.0.0/8 | nodePortAddresses: invalid value \"primary,10.0.0.0/8\"",
            "--node-ip=192.168.10.1,192.168.10.2 | --node-ip: invalid value",
    })
    void whatDoesNotApplyIsRefusedWithTheReason(String flag, String message) {
        for (boolean once : List.of(true, false)) {
            FakeNftClient f = new FakeNftClient();
            Run r = once ? run(fake(f), "--once", flag) : run(fake(f), flag);
            assertEquals(ExitCodes.USAGE, r.exit(), flag + (once ? " --once: " : ": ") + r.err());
            assertTrue(r.err().contains(message), r.err());
            assertNull(f.dump(IpFamily.IPV4));
        }
    }

    @Test
    void initOnlyChecksTheConfigurationAndTouchesNothing() {
        FakeNftClient f = new FakeNftClient();
        Run r = run(fake(f), "--init-only");
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        assertTrue(r.out().contains("nothing to initialise"), r.out());
        assertNull(f.dump(IpFamily.IPV4));
        assertEquals(ExitCodes.USAGE, run(fake(f), "--init-only", "--proxy-mode=ipvs").exit());
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

    @Test
    void onceRefusesABadConfigFile() throws Exception {
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nnftables:\n  masqueradeBit: 40\n");
        FakeNftClient f = new FakeNftClient();
        Run r = run(fake(f), "--once", "--config", bad.toString());
        assertEquals(ExitCodes.USAGE, r.exit(), r.err());
        assertTrue(r.err().contains("nftproxy: invalid configuration: nftables.masqueradeBit: invalid value \"40\""), r.err());
        assertNull(f.dump(IpFamily.IPV4));
        for (Path unreadable : List.of(dir.resolve("missing.yaml"), dir)) {
            r = run(fake(f), "--once", "--config", unreadable.toString());
            assertEquals(ExitCodes.INPUT_UNREADABLE, r.exit(), r.err());
            assertTrue(r.err().contains("--config " + unreadable + ": cannot be read"), r.err());
        }
        assertNull(f.dump(IpFamily.IPV4));
    }

    @Test
    void onceWithoutManifestsSaysSo() {
        Run r = runArgs(fake(new FakeNftClient()), List.of("--once", "--hostname-override", "k8s-node-1"));
        assertEquals(ExitCodes.USAGE, r.exit(), r.err());
        assertTrue(r.err().contains("--once applies the tables from a directory: give --manifests DIR"), r.err());
    }
}
