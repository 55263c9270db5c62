package io.nftproxy.trace;

import io.nftproxy.net.IpFamily;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The result of tracing one packet: every branch the rules allow (one per numgen pick), each with its steps and
 * outcome, and the merged outcome.
 */
public final class Trace {
    /**
     * One way through the rules. {@code choices} describes the random picks that lead here, empty if none;
     * {@code probability} is the chance a new connection takes this way (the product of its picks' odds).
     */
    public record Branch(List<String> choices, List<Step> steps, Outcome outcome, Probability probability) {
        public Branch {
            choices = List.copyOf(choices);
            steps = List.copyOf(steps);
        }
    }

    private final Packet packet;
    private final IpFamily family;
    private final List<Branch> branches;
    private final Outcome outcome;

    Trace(Packet packet, IpFamily family, List<Branch> branches) {
        this.packet = packet;
        this.family = family;
        this.branches = List.copyOf(branches);
        this.outcome = Outcome.merge(branches.stream().map(Branch::outcome).toList());
    }

    public Packet packet() { return packet; }

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
    public Outcome outcome() { return outcome; }

    /** The steps every branch shares, from the first hook up to the first random pick. */
    public List<Step> commonSteps() { return branches.get(0).steps().subList(0, commonPrefix()); }

    /** Every step of every branch, in branch order (shared steps repeated): for searching. */
    public List<Step> allSteps() { return branches.stream().flatMap(b -> b.steps().stream()).toList(); }

    /** A human-readable explanation, hook by hook and chain by chain, ending with a one-line verdict. */
    public String render() {
        StringBuilder sb = new StringBuilder();
        sb.append("trace ").append(family.nftFamily()).append(' ').append(packet).append('\n');
        int common = commonPrefix();
        String[] hook = {null};
        for (Step s : branches.get(0).steps().subList(0, common)) line(sb, s, hook, "");
        if (branches.size() > 1) {
            for (int i = 0; i < branches.size(); i++) {
                Branch b = branches.get(i);
                sb.append("branch ").append(i + 1).append('/').append(branches.size()).append(" (p ")
                        .append(b.probability()).append("): ").append(String.join(", ", b.choices())).append('\n');
                hook[0] = null;
                for (Step s : b.steps().subList(common, b.steps().size())) line(sb, s, hook, "  | ");
                sb.append("  | => ").append(b.outcome().summary()).append('\n');
            }
        }
        if (branches.size() > 1 && !dnatOdds().isEmpty()) {
            sb.append("odds: ");
            dnatOdds().forEach((hp, p) -> sb.append(hp).append(' ').append(p).append(", "));
            sb.setLength(sb.length() - 2);
            sb.append('\n');
        }
        sb.append("verdict: ").append(outcome.summary()).append('\n');
        return sb.toString();
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
