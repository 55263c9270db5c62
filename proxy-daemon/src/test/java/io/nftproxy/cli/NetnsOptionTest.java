package io.nftproxy.cli;

import io.nftproxy.netlink.NetworkNamespace;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --netns} is parsed once into the namespace handle, the same way by every command that takes it. */
class NetnsOptionTest {
    @Test
    void withoutTheOptionEveryCommandActsOnThisNamespace() {
        RunCommand run = new RunCommand();
        new CommandLine(run).parseArgs("--manifests", "x");
        assertEquals(NetworkNamespace.host(), run.netns);
        CleanupCommand cleanup = new CleanupCommand();
        new CommandLine(cleanup).parseArgs();
        assertEquals(NetworkNamespace.host(), cleanup.netns);
    }

    @Test
    void aNameBecomesThatNamespace() {
        RunCommand run = new RunCommand();
        new CommandLine(run).parseArgs("--manifests", "x", "--netns", "nftp-t-1");
        assertEquals(NetworkNamespace.named("nftp-t-1"), run.netns);
        ConntrackCommand conntrack = new ConntrackCommand();
        new CommandLine(conntrack).parseArgs("--manifests", "x", "--netns", "nftp-t-2");
        assertEquals(NetworkNamespace.named("nftp-t-2"), conntrack.netns);
    }

    @Test
    void aNameThatCouldEscapeRunNetnsIsAUsageErrorNamingIt() {
        for (Object cmd : new Object[] {new RunCommand(), new CleanupCommand(), new ConntrackCommand(), new TraceCommand()}) {
            CommandLine.ParameterException e = assertThrows(CommandLine.ParameterException.class,
                    () -> new CommandLine(cmd).parseArgs("--netns", "../../proc/1/ns/net"));
            assertTrue(e.getMessage().contains("--netns") && e.getMessage().contains("../../proc/1/ns/net")
                    && e.getMessage().contains("allowed"), e.getMessage());
        }
    }
}
