package io.nftproxy.nft;

import java.util.List;

/**
 * The kernel's {@code kube-proxy} table holds something our renderer never writes: a rule someone else added, a
 * changed chain policy, a set flag or element form we do not use. The table must then be treated as tampered
 * with (repaired, or adopted only after a full rewrite), never as equal to the model.
 *
 * <p>A checked exception rather than an {@code Unknown} variant of {@link Match} or {@link Statement}: the sealed
 * model is what the renderer produces and {@link NftSyntax} writes, so every record in it must be writable and
 * walkable by the tracer. An unknown expression is neither, and only the read-back path could ever produce it.
 * The caller still gets everything that was understood through {@link #partialTable()}, and every foreign item
 * (not only the first) through {@link #items()}.
 */
public final class UnrecognisedRuleException extends Exception {
    /**
     * One thing we could not map to the model.
     *
     * @param where  {@code chain services rule 3 (handle 41)}, {@code set foo}, {@code table}...
     * @param reason what was not understood
     * @param json   the offending JSON, compact
     */
    public record Item(String where, String reason, String json) {
        @Override public String toString() { return where + ": " + reason + ": " + json; }
    }

    private final transient TableContent partialTable;
    private final List<Item> items;

    public UnrecognisedRuleException(TableContent partialTable, List<Item> items) {
        super(message(items));
        this.partialTable = partialTable;
        this.items = List.copyOf(items);
    }

    /** The table with every unrecognised rule, chain, set or element left out; null if it could not be built. */
    public TableContent partialTable() { return partialTable; }

    public List<Item> items() { return items; }

    private static String message(List<Item> items) {
        StringBuilder b = new StringBuilder("table kube-proxy holds ").append(items.size())
                .append(" item(s) nftproxy does not write:");
        items.stream().limit(20).forEach(i -> b.append("\n  ").append(i));
        if (items.size() > 20) b.append("\n  ... and ").append(items.size() - 20).append(" more");
        return b.toString();
    }
}
