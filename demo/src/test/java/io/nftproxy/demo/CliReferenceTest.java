package io.nftproxy.demo;

import io.nftproxy.cli.NftproxyCommand;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/cli.md's flag tables and the commands' options are the same set, so the reference cannot drift from
 * {@code --help}: every option of every command (hidden ones too: kube-proxy's ignored flags are documented there)
 * is in a table that applies to the command, and every flag in such a table is an option of each command it applies
 * to. A heading says which commands its tables apply to: {@code ## `nftproxy run`} is run's, a heading naming
 * commands in parentheses, {@code (`render`, `trace`)}, is theirs, and {@code (every command)} is all of them and
 * the top level. It lives here because this module's class path holds the whole command line of a checkout,
 * proxy-daemon's commands and the plugged demo.
 */
class CliReferenceTest {
    private static final Path CLI_MD = Path.of("..", "docs", "cli.md");
    /** Options that are test and tool seams, not for operators. */
    private static final Set<String> UNDOCUMENTED = Set.of("--netns");
    private static final Pattern COMMAND_HEADING = Pattern.compile("^#{2,3} `nftproxy (\\w+)`");
    private static final Pattern TICKED = Pattern.compile("`([^`]+)`");
    private static final String TOP = "nftproxy";

    @Test
    void everyOptionIsDocumentedAndEveryDocumentedFlagExists() throws IOException {
        CommandLine top = NftproxyCommand.newCommandLine();
        Map<String, CommandLine> commands = new LinkedHashMap<>();
        commands.put(TOP, top);
        top.getSubcommands().forEach((name, cl) -> { if (!name.equals("help")) commands.put(name, cl); });

        Map<String, Set<String>> documented = new LinkedHashMap<>();
        commands.keySet().forEach(c -> documented.put(c, new TreeSet<>()));
        List<String> problems = new ArrayList<>();
        Set<String> applies = Set.of();
        String heading = "";
        for (String line : Files.readAllLines(CLI_MD)) {
            if (line.startsWith("#")) {
                heading = line;
                applies = appliesTo(line, commands.keySet());
                continue;
            }
            if (!line.startsWith("| `-")) continue;
            String firstCell = line.substring(1, line.indexOf('|', 1));
            for (String flag : flags(firstCell)) {
                if (applies.isEmpty()) problems.add(flag + " is in a table under '" + heading + "', which names no command");
                for (String c : applies) {
                    documented.get(c).add(flag);
                    if (!names(commands.get(c)).contains(flag)) {
                        problems.add("cli.md documents " + flag + " for '" + commandLine(c) + "' (under '" + heading
                                + "'), which has no such option");
                    }
                }
            }
        }
        for (var e : commands.entrySet()) {
            for (String name : names(e.getValue())) {
                if (!UNDOCUMENTED.contains(name) && !documented.get(e.getKey()).contains(name)) {
                    problems.add("'" + commandLine(e.getKey()) + "' has " + name + ", which no table of cli.md applying to it documents");
                }
            }
        }
        assertEquals(List.of(), problems);
        assertTrue(documented.get("run").contains("--master"), "the check read run's tables");
    }

    private static String commandLine(String c) { return c.equals(TOP) ? TOP : TOP + " " + c; }

    private static Set<String> names(CommandLine cl) {
        Set<String> out = new TreeSet<>();
        for (OptionSpec o : cl.getCommandSpec().options()) out.addAll(List.of(o.names()));
        return out;
    }

    /** The commands a heading's tables apply to. */
    static Set<String> appliesTo(String heading, Set<String> commands) {
        Matcher m = COMMAND_HEADING.matcher(heading);
        if (m.find()) return Set.of(m.group(1));
        if (heading.contains("(every command)")) return commands;
        int open = heading.lastIndexOf('(');
        Set<String> out = new LinkedHashSet<>();
        if (open < 0) return out;
        Matcher t = TICKED.matcher(heading.substring(open));
        while (t.find()) if (commands.contains(t.group(1))) out.add(t.group(1));
        return out;
    }

    /** The flags a table row's first cell names: {@code `--kubeconfig`}, {@code `-h`, `--help` / `-V`, `--version`}. */
    static List<String> flags(String cell) {
        List<String> out = new ArrayList<>();
        Matcher t = TICKED.matcher(cell);
        while (t.find()) {
            String token = t.group(1).split("[ =]", 2)[0];
            if (token.startsWith("-")) out.add(token);
        }
        return out;
    }
}
