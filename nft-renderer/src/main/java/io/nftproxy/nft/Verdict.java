package io.nftproxy.nft;

/** A verdict: the value of a verdict-map element or the end of a rule. */
public sealed interface Verdict {
    record Jump(String chain) implements Verdict {}
    record Goto(String chain) implements Verdict {}
    record Drop() implements Verdict {}
    record Accept() implements Verdict {}
    record Return() implements Verdict {}
    /**
     * {@code continue}: the element matched but decides nothing, the packet goes on with the next rule. The
     * {@code flat} layout's dispatch and no-endpoint elements use it because it is the one verdict an element can
     * carry that neither ends the chain nor makes the kernel revalidate the table on commit.
     */
    record Continue() implements Verdict {}

    /**
     * How nft spells the verdict. {@link NftSyntax} writes it into a script only after refusing an unsafe chain name;
     * explanations and diffs show what a kernel listing holds as it is.
     */
    default String text() {
        if (this instanceof Jump j) return "jump " + j.chain();
        if (this instanceof Goto g) return "goto " + g.chain();
        if (this instanceof Drop) return "drop";
        if (this instanceof Accept) return "accept";
        if (this instanceof Continue) return "continue";
        return "return";
    }

    /** The chain this verdict continues in, or null. */
    default String target() {
        if (this instanceof Jump j) return j.chain();
        if (this instanceof Goto g) return g.chain();
        return null;
    }
}
