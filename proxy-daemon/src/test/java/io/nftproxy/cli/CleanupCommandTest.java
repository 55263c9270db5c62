package io.nftproxy.cli;

import io.nftproxy.netlink.nft.ExecNftClient;
import io.nftproxy.netlink.nft.NftClients;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code nftproxy cleanup}'s exit codes where no kernel is needed; the kernel cases are in integration-tests. */
class CleanupCommandTest {
    @Test
    void withoutNftItExitsThreeAsDocumented() {
        RunCommand.ClientFactory noNft = (mode, netns, childStarted) -> new NftClients.Selection(
                new ExecNftClient(List.of("/nonexistent/nft"), Duration.ofSeconds(5), pid -> { }), "exec without nft");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new CleanupCommand(noNft));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute("--nft-mode", "exec");
        assertEquals(ExitCodes.NFT_UNAVAILABLE, exit, err.toString());
        assertTrue(err.toString().startsWith("nftproxy: nft unavailable"), err.toString());
        assertEquals("", out.toString(), "nothing claimed deleted");
    }

    @Test
    void otherModesAndAllAreOneChoice() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new CleanupCommand((mode, netns, childStarted) -> {
            throw new AssertionError("nothing is opened for a refused command line");
        }));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        assertEquals(ExitCodes.USAGE, cl.execute("--other-modes", "--all"));
        assertTrue(err.toString().contains("--other-modes and --all: give one"), err.toString());
        assertEquals("", out.toString());
    }
}
