package io.nftproxy.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Example command lines in --help must survive an 80-column terminal and copy-paste: picocli wraps a line longer
 * than the terminal wherever it likes, so each example line fits in 80 columns, and a command that goes on to the
 * next line ends with a backslash.
 */
class HelpTextTest {
    @Test
    void examplesFitEightyColumnsAndContinueWithABackslash() {
        List<String> bad = new ArrayList<>();
        CommandLine top = NftproxyCommand.newCommandLine();
        List<CommandLine> all = new ArrayList<>(List.of(top));
        all.addAll(top.getSubcommands().values());
        for (CommandLine cl : all) {
            List<String> lines = new ArrayList<>(List.of(cl.getCommandSpec().usageMessage().footer()));
            lines.addAll(List.of(cl.getCommandSpec().usageMessage().description()));
            for (int i = 0; i < lines.size(); i++) {
                String l = lines.get(i);
                if (!l.startsWith("  ")) continue;
                String where = cl.getCommandName() + ": " + l;
                if (l.length() > 79) bad.add("longer than 79 columns: " + where);
                String next = i + 1 < lines.size() ? lines.get(i + 1) : "";
                boolean continued = next.startsWith("      ") && (next.strip().startsWith("-") || next.strip().startsWith("|"));
                if (continued && !l.endsWith(" \\")) bad.add("continues on the next line without a backslash: " + where);
            }
        }
        assertEquals(List.of(), bad);
    }
}
