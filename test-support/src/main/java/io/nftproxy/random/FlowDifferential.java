package io.nftproxy.random;

import io.nftproxy.nft.TableContent;
import io.nftproxy.service.NodeContext;
import io.nftproxy.trace.Outcome;
import io.nftproxy.trace.Packet;
import io.nftproxy.trace.PacketTracer;
import io.nftproxy.trace.Probability;
import io.nftproxy.trace.Trace;
import io.nftproxy.trace.TraceException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Traces the same first packets through two tables of one family and says where they part: a different verdict,
 * different DNAT targets, masquerade or affinity set, or different odds. What a flow does is reduced to
 * {@link #behaviour}: each distinct end (verdict, and for a DNAT the target, whether it is masqueraded and the
 * affinity set that records the client, and where routing delivers it) with the summed probability of the
 * branches that reach it. Which chain or rule decided is not compared: the layouts decide the same things in
 * different places. The in-process layout test and the differential against kube-proxy both reduce flows with it.
 */
public final class FlowDifferential {
    private FlowDifferential() {}

    /** One flow the two tables treat differently, with both traces for the report. */
    public record Difference(Packet packet, String what, String expectedTrace, String actualTrace) {
        @Override public String toString() {
            return packet + ": " + what + "\n--- expected\n" + expectedTrace + "--- actual\n" + actualTrace;
        }
    }

    /** Every flow of {@code packets} that {@code actual} treats differently from {@code expected}. */
    public static List<Difference> compare(TableContent expected, TableContent actual, NodeContext node, List<Packet> packets) {
        return compare(behaviours(expected, node, packets), expected, actual, node, packets);
    }

    /**
     * As {@link #compare(TableContent, TableContent, NodeContext, List)}, with the expected table's
     * {@link #behaviours} computed once for several tables compared with it.
     */
    public static List<Difference> compare(List<Map<String, Probability>> expectedBehaviours, TableContent expected,
                                           TableContent actual, NodeContext node, List<Packet> packets) {
        List<Difference> out = new ArrayList<>();
        for (int i = 0; i < packets.size(); i++) {
            Packet p = packets.get(i);
            Map<String, Probability> e = expectedBehaviours.get(i), a = behaviour(actual, node, p);
            String what = !e.equals(a) ? e + " vs " + a
                    : !total(a).equals(Probability.ONE) ? "the branches' odds add up to " + total(a) : null;
            // Only a difference is worth the text of its two traces.
            if (what != null) out.add(new Difference(p, what, text(expected, node, p), text(actual, node, p)));
        }
        return out;
    }

    /** {@link #behaviour(Trace)} of each packet through {@code table}, in order. */
    public static List<Map<String, Probability>> behaviours(TableContent table, NodeContext node, List<Packet> packets) {
        return packets.stream().map(p -> behaviour(table, node, p)).toList();
    }

    private static Probability total(Map<String, Probability> behaviour) {
        return behaviour.values().stream().reduce(Probability.ZERO, Probability::plus);
    }

    private static Map<String, Probability> behaviour(TableContent table, NodeContext node, Packet p) {
        try {
            return behaviour(PacketTracer.trace(table, node, p));
        } catch (TraceException e) {
            return Map.of("untraceable: " + e.getMessage(), Probability.ONE);
        }
    }

    private static String text(TableContent table, NodeContext node, Packet p) {
        try {
            return PacketTracer.trace(table, node, p).render();
        } catch (TraceException e) {
            return e.getMessage() + "\n";
        }
    }

    /** Each distinct end of the trace's branches, with its probability; the probabilities add up to 1. */
    public static Map<String, Probability> behaviour(Trace t) {
        Map<String, Probability> out = new TreeMap<>();
        for (Trace.Branch b : t.branches()) {
            for (String end : ends(b.outcome())) out.merge(end, b.probability(), Probability::plus);
        }
        return out;
    }

    private static List<String> ends(Outcome o) {
        if (o instanceof Outcome.Dnat d) {
            return d.targets().stream().map(x -> "DNAT " + x.hostPort() + " masquerade=" + x.masquerade().applied()
                    + (x.affinitySet() == null ? "" : " affinity=" + x.affinitySet()) + " " + x.delivery()).toList();
        }
        if (o instanceof Outcome.Untouched u) return List.of("UNTOUCHED masquerade=" + u.masquerade().applied() + " " + u.delivery());
        if (o instanceof Outcome.Mixed m) return m.outcomes().stream().flatMap(x -> ends(x).stream()).toList();
        return List.of(o.kind().name());
    }

    /** True when {@code behaviour} sends the packet to an endpoint on some branch. */
    public static boolean dnats(Map<String, Probability> behaviour) {
        return behaviour.keySet().stream().anyMatch(k -> k.startsWith("DNAT "));
    }
}
