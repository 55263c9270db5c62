package io.nftproxy.trace;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The result of tracing one packet: every branch the rules allow (one per numgen pick), each with its steps and
 * outcome, and the merged outcome.
 */
public final class Trace {
    /**
     * One way through the rules. {@code choices} describes the random picks that lead here, empty if none;
     * {@code probability} is the chance a new connection takes this way (the product of its picks' odds);
     * {@code service} the service port the table's dispatch maps matched ({@code ns/svc port p (tcp 80), element
     * of @service-ips}), or null when none did.
     */
    public record Branch(List<String> choices, List<Step> steps, Outcome outcome, Probability probability, String service) {
        public Branch {
            choices = List.copyOf(choices);
            steps = List.copyOf(steps);
        }
    }

    private final Packet packet;
    private final List<Branch> branches;
    private final Outcome outcome;

    Trace(Packet packet, List<Branch> branches) {
        this.packet = packet;
        this.branches = List.copyOf(branches);
        this.outcome = Outcome.merge(branches.stream().map(Branch::outcome).toList());
    }

    /**
     * The chance of each DNAT destination ({@code ip:port}), summed over the branches that reach it, in the order
     * of {@link Outcome.Dnat#hostPorts()}. Branches that do not DNAT are not counted, so the values add up to the
     * chance of a DNAT at all.
     */
    public Map<String, Probability> dnatOdds() {
        Map<String, Probability> out = new LinkedHashMap<>();
        for (Branch b : branches) {
            if (!(b.outcome() instanceof Outcome.Dnat d)) continue;
            for (String hp : d.hostPorts()) out.merge(hp, b.probability(), Probability::plus);
        }
        return out;
    }
    public List<Branch> branches() { return branches; }

    /** The service port(s) the packet matched in the dispatch maps, as {@link Branch#service()}; empty if none. */
    public List<String> services() {
        return branches.stream().map(Branch::service).filter(java.util.Objects::nonNull).distinct().toList();
    }
    public Outcome outcome() { return outcome; }

    /** The steps every branch shares, from the first hook up to the first random pick. */
    List<Step> commonSteps() { return branches.get(0).steps().subList(0, commonPrefix()); }

    /** Every step of every branch, in branch order (shared steps repeated): for searching. */
    public List<Step> allSteps() { return branches.stream().flatMap(b -> b.steps().stream()).toList(); }

    /** A human-readable explanation, hook by hook and chain by chain, ending with a one-line verdict. */
    public String render() {
        StringBuilder sb = new StringBuilder();
        // The table traced is of the packet's family: PacketTracer.trace refuses any other.
        sb.append("trace ").append(packet.dst().family().nftFamily()).append(' ').append(packet).append('\n');
        int common = commonPrefix();
        String[] hook = {null};
        lines(sb, branches.get(0).steps().subList(0, common), hook, "");
        if (branches.size() > 1) {
            for (int i = 0; i < branches.size(); i++) {
                Branch b = branches.get(i);
                sb.append("branch ").append(i + 1).append('/').append(branches.size()).append(" (p ")
                        .append(b.probability()).append("): ").append(String.join(", ", b.choices())).append('\n');
                hook[0] = null;
                lines(sb, b.steps().subList(common, b.steps().size()), hook, "  | ");
                sb.append("  | => ").append(b.outcome().summary()).append('\n');
            }
        }
        Map<String, Probability> odds = branches.size() > 1 ? dnatOdds() : Map.of();
        if (!odds.isEmpty()) {
            sb.append(odds.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                    .collect(Collectors.joining(", ", "odds: ", "\n")));
        }
        List<String> services = services();
        sb.append("service: ").append(services.isEmpty() ? "matched none (" + packet.dst().withPort(packet.dport())
                + " " + packet.proto().nftName() + " is no Service address or NodePort in this table)"
                : "matched " + String.join("; ", services)).append('\n');
        sb.append("verdict: ").append(outcome.summary()).append('\n');
        return sb.toString();
    }

    /**
     * Prints the steps, a run of at least {@link #ALIKE_RUN} rules of one chain that do not match and differ only in
     * the numbers in their set names and bare numbers (the {@code flat} layout's per-endpoint-count rules, 64 of
     * them in the services chain) as one entry: {@code 16 rules: ip daddr . tcp dport @flat-ips-tcp-{1..16} ...}.
     * The steps themselves stay one per rule.
     */
    private static void lines(StringBuilder sb, List<Step> steps, String[] hook, String prefix) {
        int i = 0;
        while (i < steps.size()) {
            int j = i + 1;
            while (j < steps.size() && alike(steps.get(i), steps.get(j))) j++;
            if (j - i >= ALIKE_RUN) {
                List<Step> run = steps.subList(i, j);
                Step first = run.get(0);
                line(sb, new Step(first.hook(), first.chain(), first.depth(),
                        run.size() + " rules: " + merge(run.stream().map(Step::ruleText).toList()),
                        merge(run.stream().map(Step::detail).toList())), hook, prefix);
            } else {
                for (Step s : steps.subList(i, j)) line(sb, s, hook, prefix);
            }
            i = j;
        }
    }

    /** Runs of alike rules that do not match, at least this long, are printed as one entry. */
    static final int ALIKE_RUN = 3;

    private static boolean alike(Step a, Step b) {
        return a.isRule() && b.isRule() && !a.matched() && !b.matched()
                && java.util.Objects.equals(a.hook(), b.hook()) && java.util.Objects.equals(a.chain(), b.chain())
                && a.depth() == b.depth() && sameButNumbers(a.ruleText(), b.ruleText()) && sameButNumbers(a.detail(), b.detail());
    }

    /** Equal word by word, but for numbers inside set references ({@code @flat-ips-tcp-2}) and bare numbers. */
    private static boolean sameButNumbers(String a, String b) {
        String[] x = a.split(" ", -1), y = b.split(" ", -1);
        if (x.length != y.length) return false;
        for (int k = 0; k < x.length; k++) {
            if (x[k].equals(y[k])) continue;
            boolean sets = x[k].startsWith("@") && y[k].startsWith("@")
                    && x[k].replaceAll("[0-9]+", "0").equals(y[k].replaceAll("[0-9]+", "0"));
            boolean numbers = x[k].matches("[0-9]+") && y[k].matches("[0-9]+");
            if (!sets && !numbers) return false;
        }
        return true;
    }

    /** One text for texts alike but for numbers: each number that varies becomes {first..last} or {a,b,c}. */
    private static String merge(List<String> texts) {
        List<String[]> words = texts.stream().map(t -> t.split(" ", -1)).toList();
        StringBuilder out = new StringBuilder();
        for (int k = 0; k < words.get(0).length; k++) {
            if (k > 0) out.append(' ');
            int w = k;
            List<String> column = words.stream().map(ws -> ws[w]).toList();
            if (column.stream().distinct().count() == 1) {
                out.append(column.get(0));
                continue;
            }
            // Same shape: split each word at its digit runs and vary only the runs that differ.
            List<List<String>> parts = column.stream().map(Trace::digitSplit).toList();
            for (int p = 0; p < parts.get(0).size(); p++) {
                int q = p;
                List<String> values = parts.stream().map(l -> l.get(q)).distinct().toList();
                out.append(values.size() == 1 ? values.get(0) : range(values));
            }
        }
        return out.toString();
    }

    private static List<String> digitSplit(String word) {
        return DIGIT_RUNS.matcher(word).results().map(MatchResult::group).toList();
    }

    private static final Pattern DIGIT_RUNS = Pattern.compile("[0-9]+|[^0-9]+");

    private static String range(List<String> values) {
        boolean consecutive = values.stream().allMatch(v -> v.length() < 10);
        for (int i = 1; consecutive && i < values.size(); i++) {
            consecutive = Integer.parseInt(values.get(i)) == Integer.parseInt(values.get(i - 1)) + 1;
        }
        return consecutive ? "{" + values.get(0) + ".." + values.get(values.size() - 1) + "}" : "{" + String.join(",", values) + "}";
    }

    private static void line(StringBuilder sb, Step s, String[] hook, String prefix) {
        if (s.hook() != null && !s.hook().equals(hook[0])) {
            sb.append(prefix).append("[").append(s.hook()).append("]\n");
            hook[0] = s.hook();
        }
        String indent = prefix + "  ".repeat(s.depth() + 1);
        if (s.isRule()) {
            sb.append(indent).append(s.chain()).append(": ").append(s.ruleText()).append('\n');
            sb.append(indent).append("    ").append(s.detail()).append('\n');
        } else {
            sb.append(indent).append(s.detail()).append('\n');
        }
    }

    private int commonPrefix() {
        List<Step> first = branches.get(0).steps();
        int n = first.size();
        for (Branch b : branches) {
            int i = 0;
            while (i < n && i < b.steps().size() && b.steps().get(i).equals(first.get(i))) i++;
            n = i;
        }
        return n;
    }

    @Override public String toString() { return render(); }
}
