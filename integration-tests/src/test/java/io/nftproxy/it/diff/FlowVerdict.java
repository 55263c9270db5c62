package io.nftproxy.it.diff;

import io.nftproxy.trace.Outcome;
import io.nftproxy.trace.Probability;
import io.nftproxy.trace.Trace;

import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What a trace means for the packet, without how the table spells it: each distinct end (DNAT target with its
 * masquerade and whether ClientIP affinity records it, or the verdict) with its total odds. Chain names and rule
 * text are left out: the layouts name chains differently for the same behaviour.
 */
final class FlowVerdict {
    private FlowVerdict() {}

    static String of(Trace trace) {
        Map<String, Probability> ends = new TreeMap<>();
        for (Trace.Branch b : trace.branches()) ends.merge(end(b.outcome()), b.probability(), Probability::plus);
        return ends.entrySet().stream().map(e -> e.getKey() + " @" + e.getValue()).collect(Collectors.joining("; "));
    }

    private static String end(Outcome o) {
        if (o instanceof Outcome.Dnat d) {
            return d.targets().stream().map(t -> "DNAT " + t.hostPort() + " masquerade=" + (t.masquerade().applied() ? "yes" : "no")
                    + (t.affinitySet() == null ? "" : " affinity") + " " + t.delivery()).collect(Collectors.joining(" | "));
        }
        if (o instanceof Outcome.Untouched u) return "UNTOUCHED masquerade=" + (u.masquerade().applied() ? "yes" : "no") + " " + u.delivery();
        return o.kind().name();
    }
}
