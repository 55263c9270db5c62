package io.nftproxy.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --version} says what was built, from which commit and when: the build filled in all three. */
class VersionTest {
    @Test
    void versionCommitAndBuildDate() {
        StringWriter out = new StringWriter();
        CommandLine cl = NftproxyCommand.newCommandLine();
        cl.setOut(new PrintWriter(out, true));
        assertEquals(ExitCodes.OK, cl.execute("--version"));
        String v = out.toString().strip();
        assertTrue(v.matches("nftproxy \\d+\\.\\d+\\.\\d+(-SNAPSHOT)? \\(commit ([0-9a-f]{12}|unknown), built "
                + "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\)"), v);
    }
}
