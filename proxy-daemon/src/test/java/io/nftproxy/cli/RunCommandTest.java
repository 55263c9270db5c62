package io.nftproxy.cli;

import io.nftproxy.netlink.nft.FakeNftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.proxy.IpFamily;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
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
}
