package io.nftproxy.nft;

import java.util.List;

/** A rule in a chain: matches, then statements, then an optional comment. Order within a chain is significant. */
public record Rule(String chain, List<Match> matches, List<Statement> statements, String comment) implements NftObject {
    public Rule {
        matches = List.copyOf(matches);
        statements = List.copyOf(statements);
        if (statements.isEmpty()) throw new IllegalArgumentException("a rule needs a statement");
    }

    /** Every chain this rule may continue in. */
    public List<String> targets() {
        java.util.ArrayList<String> out = new java.util.ArrayList<>();
        for (Statement s : statements) {
            if (s instanceof Statement.Decide d && d.verdict().target() != null) out.add(d.verdict().target());
            if (s instanceof Statement.NumgenVmap n) n.targets().forEach(v -> out.add(v.target()));
        }
        return out;
    }

    /** Every named set or map this rule reads or updates. */
    public List<String> setRefs() {
        java.util.ArrayList<String> out = new java.util.ArrayList<>();
        for (Match m : matches) if (m instanceof Match.SetLookup l) out.add(l.set());
        for (Statement s : statements) {
            if (s instanceof Statement.VmapLookup v) out.add(v.map());
            if (s instanceof Statement.UpdateSet u) out.add(u.set());
            if (s instanceof Statement.DnatMap d) out.add(d.map());
        }
        return out;
    }
}
