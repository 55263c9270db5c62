package io.nftproxy.readback;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Match;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.NftSyntax;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.TableContent;

import io.nftproxy.nft.Capabilities;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Compares two tables, typically the model against what the kernel holds (read back by {@link KernelTableParser}),
 * and says what differs in words an operator can act on: missing, extra and different chains, rules per chain in
 * order, sets and maps, and elements with their values and comments. Empty when the tables are equal.
 *
 * <p>Compared as the kernel means them, not as the records spell them: set flags as a set, and the prefixes of an
 * {@link Match.AddrIn} as the address set they cover (the kernel sorts and merges anonymous interval sets, see
 * {@link AddressIntervals}). Chain order is not compared (it carries no meaning); rule order within a chain is.
 */
public final class TableComparison {
    /** Differences a caller may choose not to see, each for a documented reason. */
    public enum Tolerance {
        /**
         * A chain comment present on one side only. nft 1.0.6 does not print chain (or table) comments in JSON, so
         * a read-back through {@code nft -j} cannot confirm them; a comment that differs on both sides still counts.
         */
        CHAIN_COMMENTS_UNREPORTED
    }

    private final TableContent expected;
    private final TableContent actual;
    private final Set<Tolerance> tolerances;
    private final NftSyntax syntax;
    private final List<String> out = new ArrayList<>();

    private TableComparison(TableContent expected, TableContent actual, Set<Tolerance> tolerances) {
        this.expected = expected;
        this.actual = actual;
        this.tolerances = Set.copyOf(tolerances);
        this.syntax = new NftSyntax(expected.family(), Capabilities.baseline());
    }

    /** Every difference, strictly. */
    public static List<String> diff(TableContent expected, TableContent actual) {
        return diff(expected, actual, Set.of());
    }

    public static List<String> diff(TableContent expected, TableContent actual, Set<Tolerance> tolerances) {
        return new TableComparison(expected, actual, tolerances).run();
    }

    /**
     * Whether two rule lists mean the same to the kernel (anonymous address sets compared as the addresses they
     * cover, as {@link #diff} does). A table read back from the kernel spells merged address sets differently from
     * the model, and adopting it must not rewrite a chain for that alone.
     */
    public static boolean sameRules(List<Rule> expected, List<Rule> actual) {
        return expected.size() == actual.size() && canonical(expected).equals(canonical(actual));
    }

    private List<String> run() {
        if (expected.family() != actual.family()) {
            out.add("family: expected " + expected.family().nftFamily() + ", actual " + actual.family().nftFamily());
            return List.copyOf(out);
        }
        chains();
        sets();
        for (String c : expected.chains().keySet()) if (actual.chain(c) != null) rules(c);
        for (String s : expected.sets().keySet()) if (actual.set(s) != null) elements(s);
        return List.copyOf(out);
    }

    private void chains() {
        for (Chain e : expected.chains().values()) {
            Chain a = actual.chain(e.name());
            if (a == null) {
                out.add("missing chain " + e.name() + " (" + expected.rules(e.name()).size() + " rules)");
                continue;
            }
            if (!Objects.equals(e.hook(), a.hook())) {
                out.add("chain " + e.name() + ": expected " + hook(e.hook()) + ", actual " + hook(a.hook()));
            }
            boolean oneSided = e.comment() == null || a.comment() == null;
            if (!Objects.equals(e.comment(), a.comment())
                    && !(oneSided && tolerances.contains(Tolerance.CHAIN_COMMENTS_UNREPORTED))) {
                out.add("chain " + e.name() + ": expected comment " + quote(e.comment()) + ", actual " + quote(a.comment()));
            }
        }
        for (Chain a : actual.chains().values()) {
            if (expected.chain(a.name()) == null) {
                out.add("extra chain " + a.name() + " (" + actual.rules(a.name()).size() + " rules)");
            }
        }
    }

    private void sets() {
        for (NftSet e : expected.sets().values()) {
            NftSet a = actual.set(e.name());
            String kind = e.isMap() ? "map " : "set ";
            if (a == null) {
                out.add("missing " + kind + e.name() + " (" + expected.elements(e.name()).size() + " elements)");
                continue;
            }
            if (!e.keyType().equals(a.keyType()) || !Objects.equals(e.valueType(), a.valueType())) {
                out.add(kind + e.name() + ": expected type " + type(e) + ", actual " + type(a));
            }
            if (!new TreeSet<>(e.flags()).equals(new TreeSet<>(a.flags()))) {
                out.add(kind + e.name() + ": expected flags " + e.flags() + ", actual " + a.flags());
            }
            if (e.timeoutSeconds() != a.timeoutSeconds()) {
                out.add(kind + e.name() + ": expected timeout " + e.timeoutSeconds() + "s, actual " + a.timeoutSeconds() + "s");
            }
            if (!Objects.equals(e.comment(), a.comment())) {
                out.add(kind + e.name() + ": expected comment " + quote(e.comment()) + ", actual " + quote(a.comment()));
            }
        }
        for (NftSet a : actual.sets().values()) {
            if (expected.set(a.name()) == null) {
                out.add("extra " + (a.isMap() ? "map " : "set ") + a.name() + " (" + actual.elements(a.name()).size() + " elements)");
            }
        }
    }

    /** Rules in order: a longest common subsequence, then what is missing and extra around it, with positions. */
    private void rules(String chain) {
        // Compared in canonical form, printed as written.
        List<Rule> eText = expected.rules(chain), aText = actual.rules(chain);
        List<Rule> e = canonical(eText);
        List<Rule> a = canonical(aText);
        if (e.equals(a)) return;
        int n = e.size(), m = a.size();
        int[][] lcs = new int[n + 1][m + 1];
        for (int i = n - 1; i >= 0; i--) {
            for (int j = m - 1; j >= 0; j--) {
                lcs[i][j] = e.get(i).equals(a.get(j)) ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
            }
        }
        int i = 0, j = 0;
        while (i < n || j < m) {
            if (i < n && j < m && e.get(i).equals(a.get(j))) {
                i++;
                j++;
            } else if (i < n && j < m && lcs[i + 1][j + 1] == lcs[i][j]) {
                out.add("chain " + chain + " rule " + i + ": expected `" + text(eText.get(i)) + "`, actual `" + text(aText.get(j)) + "`");
                i++;
                j++;
            } else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j])) {
                out.add("chain " + chain + ": extra rule at " + j + ": `" + text(aText.get(j)) + "`");
                j++;
            } else {
                out.add("chain " + chain + ": missing rule " + i + ": `" + text(eText.get(i)) + "`");
                i++;
            }
        }
    }

    private void elements(String set) {
        Map<Element.ElementKey, Element> e = expected.elements(set);
        Map<Element.ElementKey, Element> a = actual.elements(set);
        for (Element x : e.values()) {
            Element y = a.get(x.id());
            if (y != null && (!Objects.equals(x.value(), y.value()) || !Objects.equals(x.data(), y.data())
                    || !Objects.equals(x.comment(), y.comment()))) {
                out.add("element " + set + " { " + key(x) + " }: expected " + payload(x) + ", actual " + payload(y));
            }
        }
        e.values().stream().filter(x -> !a.containsKey(x.id())).sorted(Element.ORDER)
                .forEach(x -> out.add("missing element " + set + " { " + key(x) + " " + payload(x) + " }"));
        a.values().stream().filter(y -> !e.containsKey(y.id())).sorted(Element.ORDER)
                .forEach(y -> out.add("extra element " + set + " { " + key(y) + " " + payload(y) + " }"));
    }

    private static List<Rule> canonical(List<Rule> rules) {
        return rules.stream().map(r -> new Rule(r.chain(), r.matches().stream().map(TableComparison::canonical).toList(),
                r.statements(), r.comment())).toList();
    }

    private static Match canonical(Match m) {
        return m instanceof Match.AddrIn a ? new Match.AddrIn(a.field(), a.negated(), AddressIntervals.canonical(a.prefixes())) : m;
    }

    /** The rule as nft would print it; the record itself if a name from the kernel is not one we could write. */
    private String text(Rule r) {
        try {
            return syntax.ruleText(r);
        } catch (IllegalArgumentException ex) {
            return r.toString();
        }
    }

    private static String key(Element e) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < e.key().size(); i++) {
            if (i > 0) b.append(" . ");
            NftSyntax.value(b, e.key().get(i));
        }
        return b.toString();
    }

    /** {@code comment "x" : goto c}, as nft prints an element's payload after its key. */
    private static String payload(Element e) {
        List<String> parts = new ArrayList<>();
        if (e.comment() != null) parts.add("comment " + quote(e.comment()));
        if (e.value() != null) parts.add(": " + e.value().text());
        if (e.data() != null) parts.add(": " + e.data().ip() + " . " + e.data().port());
        return parts.isEmpty() ? "(no value, no comment)" : String.join(" ", parts);
    }

    private static String hook(Chain.Hook h) {
        return h == null ? "a regular chain" : "type " + h.type() + " hook " + h.hook() + " priority " + h.priority();
    }

    private static String type(NftSet s) {
        return String.join(" . ", s.keyType()) + (s.isMap() ? " : " + s.valueType() : "");
    }

    private static String quote(String s) { return s == null ? "(none)" : "\"" + s + "\""; }
}
