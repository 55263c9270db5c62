package io.nftproxy.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kube-proxy's command shape at the top level: flags with no command are {@code run}'s, so kubeadm's DaemonSet
 * command line runs with the binary swapped; {@code --version} answers on every command.
 */
class KubeProxyCommandShapeTest {
    record Result(int exit, String out, String err) {}

    /** As Main runs it: the real top-level command line, after the kube-proxy shape is recognised. */
    private static Result main(String... args) {
        StringWriter out = new StringWriter(), err = new StringWriter();
        CommandLine cl = NftproxyCommand.newCommandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(NftproxyCommand.asKubeProxyCommandLine(args));
        return new Result(exit, out.toString(), err.toString());
    }

    @Test
    void flagsWithNoCommandAreRunsFlags() {
        assertArrayEquals(new String[] {"run", "--config=/x", "--hostname-override=n"},
                NftproxyCommand.asKubeProxyCommandLine(new String[] {"--config=/x", "--hostname-override=n"}));
        assertArrayEquals(new String[] {"run", "-v", "2"}, NftproxyCommand.asKubeProxyCommandLine(new String[] {"-v", "2"}));
        for (List<String> asIs : List.of(List.<String>of(), List.of("--help"), List.of("-h"), List.of("--version"), List.of("-V"),
                List.of("render", "--manifests", "x"), List.of("run", "--once"))) {
            String[] a = asIs.toArray(String[]::new);
            assertArrayEquals(a, NftproxyCommand.asKubeProxyCommandLine(a), asIs.toString());
        }
    }

    /**
     * kubeadm's DaemonSet runs {@code kube-proxy --config=/var/lib/kube-proxy/config.conf
     * --hostname-override=$(NODE_NAME)}: the same arguments reach {@code run} and load kubeadm's own file. Written out
     * with --write-config-to, since running the daemon here would program this machine (the daemon itself runs this
     * command line in integration-tests' KubeadmCommandLineKernelTest).
     */
    @Test
    void kubeadmsDaemonSetCommandLineReachesRun(@TempDir Path dir) throws Exception {
        Path kubeadm = Path.of(KubeProxyCommandShapeTest.class.getResource("/kubeadm-v1.36-kube-proxy-config.conf").toURI());
        Path written = dir.resolve("effective.yaml");
        Result r = main("--config=" + kubeadm, "--hostname-override=k8s-node-7", "--write-config-to=" + written);
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        String yaml = Files.readString(written);
        assertTrue(yaml.contains("hostnameOverride: \"k8s-node-7\""), yaml);
        assertTrue(yaml.contains("kubeconfig: \"/var/lib/kube-proxy/kubeconfig.conf\""), yaml);
        // A flag run does not know is refused as run refuses it, naming run.
        Result bad = main("--config=" + kubeadm, "--no-such-flag");
        assertEquals(ExitCodes.USAGE, bad.exit());
        assertTrue(bad.err().contains("Unknown option: '--no-such-flag'"), bad.err());
    }

    /** With no arguments at all there is nothing to run: the help, on stderr, and the usage exit code. */
    @Test
    void noArgumentsPrintsTheHelp() {
        Result r = main();
        assertEquals(ExitCodes.USAGE, r.exit());
        assertTrue(r.err().contains("Usage: nftproxy"), r.err());
        assertTrue(r.err().contains("flags with no command run the daemon"), r.err());
    }

    /** --version on a command says what it says at the top level (picocli printed nothing there before). */
    @Test
    void versionOnEveryCommand() {
        String top = main("--version").out().strip();
        assertTrue(top.startsWith("nftproxy "), top);
        for (String command : NftproxyCommand.newCommandLine().getSubcommands().keySet()) {
            if (command.equals("help")) continue;
            Result r = main(command, "--version");
            assertEquals(ExitCodes.OK, r.exit(), command + ": " + r.err());
            assertEquals(top, r.out().strip(), command);
        }
    }
}
