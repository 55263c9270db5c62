package io.nftproxy.render;

import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;
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
 * Compares the rendered script of every golden scenario with {@code src/test/resources/golden/NAME.nft} (kube-proxy
 * 1.36's layout), {@code src/test/resources/golden-fast/NAME.nft} ({@link TableLayout#FAST}) and
 * {@code src/test/resources/golden-flat/NAME.nft} ({@link TableLayout#FLAT}), whitespace-
 * normalised, {@code #} lines ignored except the diagnostics ({@code # diagnostic: ...}). Run with {@code -Dgolden.update=true} to rewrite the files, then review the
 * diff like any code change.
 */
public class GoldenTest {
    static List<GoldenScenarios.Scenario> scenarios() { return GoldenScenarios.all(); }

    /** Every scenario in every layout. */
    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> scenariosByLayout() {
        return java.util.Arrays.stream(TableLayout.values()).flatMap(l -> scenarios().stream()
                .map(s -> org.junit.jupiter.params.provider.Arguments.of(l, s)));
    }

    /** The golden text of a scenario in kube-proxy 1.36's layout. */
    public static String script(GoldenScenarios.Scenario s) { return script(s, TableLayout.UPSTREAM); }

    /** The golden text of a scenario: a header, then the ip and ip6 creation scripts. */
    public static String script(GoldenScenarios.Scenario s, TableLayout layout) {
        Renderer.Rendering r = new Renderer(layout).render(s.snapshot(), s.node());
        StringBuilder sb = new StringBuilder();
        sb.append("# scenario: ").append(s.name()).append('\n');
        sb.append("# ").append(s.description()).append('\n');
        r.diagnostics().forEach(d -> sb.append(SKIPPED).append(d).append('\n'));
        for (IpFamily f : IpFamily.values()) {
            sb.append(Transaction.creating(r.table(f)).script(Capabilities.baseline()));
        }
        return sb.toString();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("scenariosByLayout")
    void matchesGolden(TableLayout layout, GoldenScenarios.Scenario s) throws IOException {
        compare(Path.of("src/test/resources", GoldenScenarios.goldenDir(layout), s.name() + ".nft"), script(s, layout));
    }

    /**
     * The flat layout adds its own objects and rules and otherwise keeps the fast layout's: every line of the fast
     * script that belongs to a port the flat layout does not dispatch itself, and every skeleton line, is there.
     * What it drops are the chains of simple ports and their goto elements; what it rewrites are those elements'
     * verdicts and the no-endpoint rejects ({@code continue}).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void flatLayoutKeepsEveryObjectOperatorsLookFor(GoldenScenarios.Scenario s) {
        List<String> fast = normalise(script(s, TableLayout.FAST)).lines().toList();
        java.util.Set<String> flat = java.util.Set.copyOf(normalise(script(s, TableLayout.FLAT)).lines().toList());
        for (String line : fast) {
            if (line.matches("add element ip6? kube-proxy (service-ips|service-nodeports|no-endpoint-services|no-endpoint-nodeports) .*")
                    || line.matches("add (rule|chain) ip6? kube-proxy [a-z]+-[A-Z0-9]{8}-.*")) continue;
            assertTrue(flat.contains(line), "flat layout lost: " + line);
        }
    }

    /**
     * The fast layout differs from upstream's only in the rules of the policy chains: the same objects, in the
     * same order, every other line identical.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void fastLayoutChangesOnlyPolicyChainRules(GoldenScenarios.Scenario s) {
        List<String> up = normalise(script(s, TableLayout.UPSTREAM)).lines().filter(l -> !isPolicyRule(l)).toList();
        List<String> fast = normalise(script(s, TableLayout.FAST)).lines().filter(l -> !isPolicyRule(l)).toList();
        assertEquals(up, fast);
    }

    private static boolean isPolicyRule(String line) {
        return line.matches("add rule ip6? kube-proxy (service|local)-[A-Z0-9]{8}-\\S+ .*");
    }

    private static void compare(Path file, String actual) throws IOException {
        Path dir = file.getParent();
        if (Boolean.getBoolean("golden.update")) {
            Files.createDirectories(dir);
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

    /** Diagnostics are part of what a golden file pins; the other {@code #} lines only describe the scenario. */
    static final String SKIPPED = "# diagnostic: ";

    static String normalise(String s) {
        return s.lines().map(String::strip).filter(l -> !l.isEmpty() && (!l.startsWith("#") || l.startsWith(SKIPPED.strip())))
                .map(l -> l.replaceAll("\\s+", " ")).collect(Collectors.joining("\n"));
    }
}
