package io.nftproxy.trace;

import io.nftproxy.net.IpAddress;

import java.util.List;
import java.util.stream.Collectors;

/** Where a traced packet ends up. One per branch; {@link Trace#outcome()} merges the branches. */
public sealed interface Outcome {
    enum Kind { DNAT, REJECT, DROP, UNTOUCHED, MIXED }

    Kind kind();

    /** The one-line verdict. */
    String summary();

    /** Whether the connection is source-NATed in postrouting, and which rule decided it. */
    record Masquerade(boolean applied, String reason) {
        public static final Masquerade NONE = new Masquerade(false, "no masquerade mark and not a hairpin connection");

        String text() { return applied ? "yes (" + reason + ")" : "no"; }
    }

    /**
     * One possible DNAT destination. {@code affinitySet} is the ClientIP affinity set that records the client on
     * this choice (null without affinity); {@code delivery} says where the packet goes after routing.
     */
    record Target(IpAddress ip, int port, Masquerade masquerade, String affinitySet, String delivery) {
        public String hostPort() { return ip.withPort(port); }
    }

    /** DNAT to one of {@code targets}, in numgen index order; more than one means a random pick. */
    record Dnat(List<Target> targets) implements Outcome {
        public Dnat { targets = List.copyOf(targets); }

        @Override public Kind kind() { return Kind.DNAT; }

        public List<String> hostPorts() { return targets.stream().map(Target::hostPort).toList(); }

        /** "yes" or "no" when every target agrees, else {@code ip:port=yes|ip:port=no}. */
        public String masqueradeSummary() {
            if (targets.stream().allMatch(t -> t.masquerade().applied())) return "yes";
            if (targets.stream().noneMatch(t -> t.masquerade().applied())) return "no";
            return targets.stream().map(t -> t.hostPort() + "=" + (t.masquerade().applied() ? "yes" : "no"))
                    .collect(Collectors.joining("|"));
        }

        @Override public String summary() {
            StringBuilder sb = new StringBuilder("DNAT to ");
            sb.append(String.join(" | ", hostPorts()));
            if (targets.size() > 1) sb.append(" (random)");
            boolean sameMasq = targets.stream().map(Target::masquerade).distinct().count() == 1;
            sb.append(", masquerade: ").append(sameMasq ? targets.get(0).masquerade().text() : targets.stream()
                    .map(t -> t.hostPort() + " " + t.masquerade().text()).collect(Collectors.joining("; ")));
            List<String> sets = targets.stream().filter(t -> t.affinitySet() != null)
                    .map(t -> t.hostPort() + " -> @" + t.affinitySet()).toList();
            if (!sets.isEmpty()) sb.append(", affinity: client recorded in ").append(String.join(" | ", sets));
            return sb.toString();
        }
    }

    /** Refused with ICMP port unreachable (ECONNREFUSED for a TCP client) by {@code rule} in {@code chain}. */
    record Reject(String chain, String rule) implements Outcome {
        @Override public Kind kind() { return Kind.REJECT; }
        @Override public String summary() { return "REJECT in " + chain + ": " + rule; }
    }

    /** Silently dropped by {@code rule} (or a map element) in {@code chain}. */
    record Drop(String chain, String rule) implements Outcome {
        @Override public Kind kind() { return Kind.DROP; }
        @Override public String summary() { return "DROP in " + chain + ": " + rule; }
    }

    /** No NAT and no drop: the packet goes on as it came, possibly masqueraded. */
    record Untouched(Masquerade masquerade, String delivery) implements Outcome {
        @Override public Kind kind() { return Kind.UNTOUCHED; }
        @Override public String summary() {
            return "UNTOUCHED (no DNAT, no drop; " + delivery + "), masquerade: " + masquerade.text();
        }
    }

    /** Branches that disagree on the kind of outcome: each is listed. */
    record Mixed(List<Outcome> outcomes) implements Outcome {
        public Mixed { outcomes = List.copyOf(outcomes); }
        @Override public Kind kind() { return Kind.MIXED; }
        @Override public String summary() {
            return "MIXED: " + outcomes.stream().map(Outcome::summary).collect(Collectors.joining(" || "));
        }
    }

    /** Merges the outcomes of all branches: DNAT targets are collected, identical outcomes collapse. */
    static Outcome merge(List<Outcome> perBranch) {
        if (perBranch.isEmpty()) throw new IllegalArgumentException("no branches");
        if (perBranch.stream().allMatch(o -> o instanceof Dnat)) {
            return new Dnat(perBranch.stream().flatMap(o -> ((Dnat) o).targets().stream()).distinct().toList());
        }
        List<Outcome> distinct = perBranch.stream().distinct().toList();
        return distinct.size() == 1 ? distinct.get(0) : new Mixed(distinct);
    }
}
