package io.nftproxy.demo;

import io.nftproxy.cli.NftproxyCommand;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** With this module's jar on the class path, the daemon's command line has the demo subcommand, before help. */
class DemoCommandPluggedTest {
    @Test
    void theCommandLineFindsTheDemoThroughItsServiceFile() {
        CommandLine cl = NftproxyCommand.newCommandLine();
        assertInstanceOf(DemoCommand.class, cl.getSubcommands().get("demo").getCommand());
        List<String> names = List.copyOf(cl.getSubcommands().keySet());
        assertEquals("help", names.get(names.size() - 1), names::toString);
    }

    @Test
    void anOutOfRangeRequestCountIsAUsageErrorBeforeAnythingIsBuilt() {
        StringWriter err = new StringWriter();
        CommandLine cl = NftproxyCommand.newCommandLine();
        cl.setErr(new PrintWriter(err, true));
        assertEquals(2, cl.execute("demo", "--requests", "0"));
        assertTrue(err.toString().contains("--requests"), err::toString);
    }
}
