package io.nftproxy.render;

import io.nftproxy.nft.Transaction;
import io.nftproxy.proxy.Capabilities;
import io.nftproxy.proxy.IpFamily;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Compares the rendered script of every golden scenario with {@code src/test/resources/golden/NAME.nft}
 * (whitespace-normalised, {@code #} lines ignored). Run with {@code -Dgolden.update=true} to rewrite the files,
 * then review the diff like any code change.
 */
class GoldenTest {
    static final Path DIR = Path.of("src/test/resources/golden");

    static List<GoldenScenarios.Scenario> scenarios() { return GoldenScenarios.all(); }

    /** The golden text of a scenario: a header, then the ip and ip6 creation scripts. */
    public static String script(GoldenScenarios.Scenario s) {
        Renderer.Rendering r = Renderer.upstream().render(s.snapshot(), s.node());
        StringBuilder sb = new StringBuilder();
        sb.append("# scenario: ").append(s.name()).append('\n');
        sb.append("# ").append(s.description()).append('\n');
        r.diagnostics().forEach(d -> sb.append("# ").append(d).append('\n'));
        for (IpFamily f : IpFamily.values()) {
            sb.append(Transaction.creating(r.table(f)).script(Capabilities.baseline()));
        }
        return sb.toString();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void matchesGolden(GoldenScenarios.Scenario s) throws IOException {
        String actual = script(s);
        Path file = DIR.resolve(s.name() + ".nft");
        if (Boolean.getBoolean("golden.update")) {
            Files.createDirectories(DIR);
            Files.writeString(file, actual, StandardCharsets.UTF_8);
        }
        assertTrue(Files.exists(file), "missing golden file " + file + "; run with -Dgolden.update=true");
        assertEquals(normalise(Files.readString(file)), normalise(actual), "golden " + file);
    }

    @Test
    void atLeastTwentyFiveScenarios() {
        assertTrue(scenarios().size() >= 25, "scenarios: " + scenarios().size());
        assertEquals(scenarios().size(), scenarios().stream().map(GoldenScenarios.Scenario::name).distinct().count());
    }

    static String normalise(String s) {
        return s.lines().map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#"))
                .map(l -> l.replaceAll("\\s+", " ")).collect(Collectors.joining("\n"));
    }
}
