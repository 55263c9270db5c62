package io.nftproxy.trace;

/**
 * One thing the tracer saw: a rule evaluated (matched or not, and why), a chain entered or left, a routing
 * decision. {@code ruleText} is the rule as nft would print it, or null for a step that is not a rule.
 * {@code depth} is the jump/goto depth below the base chain, for indentation.
 */
public record Step(String hook, String chain, int depth, String ruleText, String detail) {
    /** The detail of a rule whose matches did not all hold starts with this. */
    static final String NO_MATCH = "no match: ";

    public boolean isRule() { return ruleText != null; }

    /** A rule whose matches held: its statements ran (or began to). */
    public boolean matched() { return isRule() && !detail.startsWith(NO_MATCH); }

    /** The sets and maps the rule names ({@code @name}), in order; none for a step that is not a rule. */
    public java.util.List<String> setRefs() {
        if (ruleText == null) return java.util.List.of();
        return SET_REF.matcher(ruleText).results().map(m -> m.group(1)).toList();
    }

    private static final java.util.regex.Pattern SET_REF = java.util.regex.Pattern.compile("@([^\\s,}]+)");
}
