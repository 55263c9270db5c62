package io.nftproxy.trace;

/**
 * One thing the tracer saw: a rule evaluated (matched or not, and why), a chain entered or left, a routing
 * decision. {@code ruleText} is the rule as nft would print it, or null for a step that is not a rule.
 * {@code depth} is the jump/goto depth below the base chain, for indentation.
 */
public record Step(String hook, String chain, int depth, String ruleText, String detail) {
    public boolean isRule() { return ruleText != null; }
}
