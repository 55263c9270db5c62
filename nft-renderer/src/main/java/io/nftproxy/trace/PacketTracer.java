package io.nftproxy.trace;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Field;
import io.nftproxy.nft.Match;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.NftSyntax;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Statement;
import io.nftproxy.nft.Value;
import io.nftproxy.nft.Verdict;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.proxy.NodeContext;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Walks the first packet of a new connection through a rendered {@link TableContent}, hook by hook in netfilter's
 * order, and says where it goes and why. Pure: the table is only read.
 *
 * <p>Model: {@code ct state new} holds; {@code ct status dnat} holds once a DNAT happened on this path; dynamic
 * (affinity) sets are empty, as they are for a client's first connection. A NAT statement ends its base chain
 * (nft's nat expressions are terminal and accept). Every random pick (a numgen DNAT map, a numgen verdict map, or a
 * {@code numgen random mod K V} match, which holds with probability 1/K) forks the trace; each branch is evaluated
 * to its end, because masquerade can differ per endpoint (hairpin), and carries the exact probability of its picks.
 *
 * <p>Paths: POD and EXTERNAL enter at prerouting; routing then sends a (possibly DNATed) destination that is a local
 * address to input (where the trace ends, at the socket) and anything else to forward and postrouting. HOST enters
 * at output and goes through postrouting; to a local address it then loops back to input. Only this table's base
 * chains are modelled, not other tables' rules.
 */
public final class PacketTracer {
    /** Jump/goto nesting beyond which the table is taken to loop; kube-proxy's own tables nest at most 4 deep. */
    public static final int MAX_DEPTH = 32;
    /** Rules evaluated per branch. */
    public static final int MAX_STEPS = 10_000;
    /** Branches (combinations of random picks) per trace. */
    public static final int MAX_BRANCHES = 4_096;

    private static final String HAIRPIN_SET = "hairpin-connections";

    private PacketTracer() {}

    public static Trace trace(TableContent table, NodeContext node, Packet p) {
        if (p.dst().family() != table.family()) {
            throw new IllegalArgumentException("packet to " + p.dst() + " cannot be traced through the "
                    + table.family().nftFamily() + " table");
        }
        Set<IpAddress> local = new HashSet<>(node.localAddresses());
        local.addAll(node.nodeIPs());
        List<Trace.Branch> branches = new ArrayList<>();
        // Depth-first over the random picks: run once with a forced prefix of choices (index 0 beyond it), then
        // queue every untried alternative of the choices the run made on its own.
        Deque<List<Integer>> pending = new ArrayDeque<>();
        pending.push(List.of());
        List<List<Integer>> done = new ArrayList<>();
        while (!pending.isEmpty()) {
            List<Integer> forced = pending.pop();
            Run run = new Run(table, node, local, p, forced);
            Trace.Branch b = run.execute();
            branches.add(b);
            done.add(run.taken);
            if (branches.size() > MAX_BRANCHES) {
                throw new TraceException("more than " + MAX_BRANCHES + " possible paths for " + p + "; giving up");
            }
            for (int j = run.taken.size() - 1; j >= forced.size(); j--) {
                for (int x = run.arity.get(j) - 1; x >= 1; x--) {
                    List<Integer> next = new ArrayList<>(run.taken.subList(0, j));
                    next.add(x);
                    pending.push(next);
                }
            }
        }
        // Branch order follows the pick indices (numgen order), whatever order the search found them in.
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < branches.size(); i++) order.add(i);
        order.sort(Comparator.comparing(done::get, PacketTracer::compareChoices));
        return new Trace(p, table.family(), order.stream().map(branches::get).toList());
    }

    private static int compareChoices(List<Integer> a, List<Integer> b) {
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            int c = Integer.compare(a.get(i), b.get(i));
            if (c != 0) return c;
        }
        return Integer.compare(a.size(), b.size());
    }

    /** How a chain or rule ended. NEXT: go on with the next rule; RETURN: leave this chain for its caller. */
    private enum Flow { NEXT, RETURN, ACCEPT, DROP }

    /** One linear evaluation of the packet, following the forced choices. */
    private static final class Run {
        private final TableContent table;
        private final NodeContext node;
        private final Set<IpAddress> local;
        private final Packet packet;
        private final NftSyntax syntax;
        private final List<Integer> forced;
        final List<Integer> taken = new ArrayList<>();
        final List<Integer> arity = new ArrayList<>();
        private final List<String> choiceLabels = new ArrayList<>();
        private Probability odds = Probability.ONE;
        private final List<Step> steps = new ArrayList<>();

        private String hook;
        private IpAddress dst;
        private int dport;
        private int mark;
        private String markSetBy;
        private Statement.Target dnat;
        private String affinitySet;
        private Outcome.Masquerade masquerade = Outcome.Masquerade.NONE;
        private Outcome end;
        private int ruleCount;

        Run(TableContent table, NodeContext node, Set<IpAddress> local, Packet packet, List<Integer> forced) {
            this.table = table;
            this.node = node;
            this.local = local;
            this.packet = packet;
            this.syntax = new NftSyntax(table.family(), Capabilities.baseline());
            this.forced = forced;
            this.dst = packet.dst();
            this.dport = packet.dport();
        }

        Trace.Branch execute() {
            String delivery;
            if (packet.origin() == Origin.HOST) {
                if (!hook("output")) return finish(null);
                if (!hook("postrouting")) return finish(null);
                if (isLocal(dst)) {
                    // Looped back through lo, the first packet keeps its conntrack entry, still new, so filter-input
                    // sees it: a host's connection to its own NodePort without endpoints is rejected there (checked
                    // on kernel 6.18). nat chains do not run again; prerouting's filter chain re-checks firewall-ips,
                    // which output already passed for this daddr.
                    note(null, "routing: " + dst + " is a local address -> over loopback to the input path");
                    if (!hook("input")) return finish(null);
                    delivery = "to a local socket over loopback";
                } else {
                    delivery = "sent out of the node";
                }
            } else {
                if (!hook("prerouting")) return finish(null);
                if (isLocal(dst)) {
                    note(null, "routing: " + dst + " is a local address -> input path");
                    if (!hook("input")) return finish(null);
                    delivery = "delivered to a local socket";
                } else {
                    note(null, "routing: " + dst + " is not a local address -> forward path");
                    if (!hook("forward")) return finish(null);
                    if (!hook("postrouting")) return finish(null);
                    delivery = "forwarded";
                }
            }
            return finish(delivery);
        }

        private Trace.Branch finish(String delivery) {
            Outcome o = end;
            if (o == null) {
                o = dnat == null ? new Outcome.Untouched(masquerade, delivery)
                        : new Outcome.Dnat(List.of(new Outcome.Target(dnat.ip(), dnat.port(), masquerade, affinitySet, delivery)));
            }
            return new Trace.Branch(choiceLabels, steps, o, odds);
        }

        /** Runs the base chains of one hook in priority order; false if the packet was dropped or rejected. */
        private boolean hook(String name) {
            hook = name;
            List<Chain> bases = table.chains().values().stream()
                    .filter(c -> c.isBase() && c.hook().hook().equals(name))
                    .sorted(Comparator.comparingInt(c -> c.hook().priority()))
                    .toList();
            for (Chain c : bases) {
                note(c.name(), "base chain " + c.name() + " (type " + c.hook().type() + ", hook " + name
                        + ", priority " + c.hook().priority() + ")");
                Flow f = chain(c.name(), 0);
                if (f == Flow.DROP) return false;
            }
            return true;
        }

        private Flow chain(String name, int depth) {
            if (depth > MAX_DEPTH) {
                throw new TraceException("jumps nest deeper than " + MAX_DEPTH + " at chain " + name
                        + " (a loop in the table?) while tracing " + packet);
            }
            if (table.chain(name) == null) throw new TraceException("rule jumps to missing chain " + name);
            if (depth > 0) step(name, depth - 1, null, "enter " + name);
            for (Rule r : table.rules(name)) {
                Flow f = rule(r, name, depth);
                if (f == Flow.NEXT) continue;
                if (f == Flow.RETURN) return Flow.RETURN;
                return f;
            }
            step(name, depth, null, depth == 0 ? "end of " + name + ": policy accept"
                    : "end of " + name + ": return to caller");
            return Flow.RETURN;
        }

        private Flow rule(Rule r, String chain, int depth) {
            if (++ruleCount > MAX_STEPS) {
                throw new TraceException("more than " + MAX_STEPS + " rules evaluated (a loop in the table?) while tracing " + packet);
            }
            String text = syntax.ruleText(r);
            List<String> why = new ArrayList<>();
            String hairpinKey = null;
            for (Match m : r.matches()) {
                String[] detail = new String[1];
                boolean ok = match(m, detail);
                if (!ok) {
                    step(chain, depth, text, "no match: " + detail[0]);
                    return Flow.NEXT;
                }
                why.add(detail[0]);
                if (m instanceof Match.SetLookup l && l.set().equals(HAIRPIN_SET)) hairpinKey = keyText(l.fields()) + " in @" + l.set();
            }
            for (Statement s : r.statements()) {
                if (s instanceof Statement.MarkOr m) {
                    mark |= m.mark();
                    markSetBy = chain + ": " + (r.comment() != null ? r.comment() : text);
                    why.add("mark set to " + hex(mark));
                } else if (s instanceof Statement.MarkXor m) {
                    mark ^= m.mark();
                    why.add("mark set to " + hex(mark));
                } else if (s instanceof Statement.UpdateSet u) {
                    affinitySet = u.set();
                    why.add("client " + fieldValue(u.field()) + " recorded in @" + u.set());
                } else if (s instanceof Statement.Masquerade) {
                    String reason;
                    if (hairpinKey != null) reason = "hairpin: " + hairpinKey;
                    else if (r.matches().stream().anyMatch(x -> x instanceof Match.MarkBits) && markSetBy != null) {
                        reason = "mark " + hex(markBit(r)) + " set in " + markSetBy;
                    } else reason = why.isEmpty() ? "unconditional masquerade in " + chain : String.join("; ", why);
                    masquerade = new Outcome.Masquerade(true, reason);
                    why.add("MASQUERADE: source NATed to the outgoing interface address");
                    step(chain, depth, text, String.join("; ", why));
                    return Flow.ACCEPT;
                } else if (s instanceof Statement.Dnat d) {
                    int i = d.targets().size() > 1 ? choose(d.targets().size(), d.targets()) : 0;
                    Statement.Target t = d.targets().get(i);
                    if (t.ip().family() != table.family()) throw new TraceException("dnat target " + t.ip() + " of the wrong family in " + chain);
                    dnat = t;
                    dst = t.ip();
                    dport = t.port();
                    String pick = d.targets().size() > 1
                            ? " (numgen random mod " + d.targets().size() + " picked " + i + "; every pick is traced)" : "";
                    why.add("DNAT to " + t.ip().withPort(t.port()) + pick);
                    step(chain, depth, text, String.join("; ", why));
                    return Flow.ACCEPT;
                } else if (s instanceof Statement.Reject) {
                    why.add("REJECT (ICMP port unreachable)");
                    step(chain, depth, text, String.join("; ", why));
                    end = new Outcome.Reject(chain, text);
                    return Flow.DROP;
                } else if (s instanceof Statement.Decide d) {
                    why.add(d.verdict().text());
                    step(chain, depth, text, String.join("; ", why));
                    return verdict(d.verdict(), chain, text, depth);
                } else if (s instanceof Statement.VmapLookup v) {
                    String key = keyText(v.fields());
                    Element e = table.element(v.map(), key(v.fields()));
                    if (e == null || e.value() == null) {
                        why.add(fieldsText(v.fields()) + " " + key + " not in @" + v.map() + ": no verdict, continue");
                        step(chain, depth, text, String.join("; ", why));
                        return Flow.NEXT;
                    }
                    why.add(fieldsText(v.fields()) + " " + key + " found in @" + v.map()
                            + (e.comment() != null ? " (" + e.comment() + ")" : "") + " -> " + e.value().text());
                    step(chain, depth, text, String.join("; ", why));
                    return verdict(e.value(), chain, v.map() + " element " + key + " : " + e.value().text(), depth);
                } else if (s instanceof Statement.NumgenVmap n) {
                    int i = choose(n.targets().size(), n.targets());
                    Verdict v = n.targets().get(i);
                    why.add("numgen random mod " + n.targets().size() + " picked " + i + " -> " + v.text()
                            + (n.targets().size() > 1 ? " (every pick is traced)" : ""));
                    step(chain, depth, text, String.join("; ", why));
                    return verdict(v, chain, text, depth);
                } else {
                    throw new TraceException("statement the tracer does not model: " + s);
                }
            }
            step(chain, depth, text, String.join("; ", why));
            return Flow.NEXT;
        }

        private Flow verdict(Verdict v, String chain, String source, int depth) {
            if (v instanceof Verdict.Jump j) {
                Flow f = chain(j.chain(), depth + 1);
                if (f == Flow.RETURN) {
                    step(chain, depth, null, "back in " + chain);
                    return Flow.NEXT;
                }
                return f;
            }
            if (v instanceof Verdict.Goto g) {
                // goto does not return here: falling off the target returns to this chain's caller.
                return chain(g.chain(), depth + 1);
            }
            if (v instanceof Verdict.Drop) {
                end = new Outcome.Drop(chain, source);
                return Flow.DROP;
            }
            if (v instanceof Verdict.Accept) return Flow.ACCEPT;
            return Flow.RETURN;
        }

        private boolean match(Match m, String[] detail) {
            if (m instanceof Match.CtStateNew) {
                detail[0] = "ct state new (first packet of a new connection)";
                return true;
            }
            if (m instanceof Match.CtStatusDnat) {
                detail[0] = dnat != null ? "ct status dnat (the connection was DNATed)" : "ct status dnat is false (no DNAT happened)";
                return dnat != null;
            }
            if (m instanceof Match.SetLookup l) {
                boolean in = table.element(l.set(), key(l.fields())) != null;
                String what = fieldsText(l.fields()) + " " + keyText(l.fields());
                NftSet set = table.set(l.set());
                String note = !in && set != null && (set.flags().contains("dynamic") || l.set().startsWith("affinity-"))
                        ? " (affinity sets are empty at trace time: this is the client's first connection)" : "";
                detail[0] = what + (in ? " in @" : " not in @") + l.set() + note;
                return in != l.negated();
            }
            if (m instanceof Match.AddrIn a) {
                IpAddress addr = a.field() == Field.SADDR ? packet.src() : dst;
                boolean in = a.prefixes().stream().anyMatch(p -> p.contains(addr));
                String set = a.prefixes().stream().map(IpPrefix::toString).collect(Collectors.joining(", ", "{ ", " }"));
                detail[0] = fieldsText(List.of(a.field())) + " " + addr + (in ? " in " : " not in ") + set;
                return in != a.negated();
            }
            if (m instanceof Match.ProtoIs p) {
                detail[0] = "meta l4proto " + packet.proto().nftName() + (p.protocol() == packet.proto() ? "" : " is not " + p.protocol().nftName());
                return p.protocol() == packet.proto();
            }
            if (m instanceof Match.IifName i) {
                // The tracer knows where a packet enters, not the interface's name: a pod's packet enters on the
                // pods' interface the detector names, an off-node one on another, a local process's on none.
                String text = "iifname " + (i.negated() ? "!= " : "") + "\"" + i.name() + "\"";
                if (packet.origin() == Origin.HOST) {
                    detail[0] = text + " does not hold: a local process's packet has no input interface";
                    return false;
                }
                boolean pods = packet.origin() == Origin.POD;
                detail[0] = text + ": the packet enters on " + (pods ? "a pod's interface" : "an interface that is not a pod's");
                return pods != i.negated();
            }
            if (m instanceof Match.FibLocal f) {
                IpAddress addr = f.field() == Field.SADDR ? packet.src() : dst;
                boolean loc = isLocal(addr);
                detail[0] = "fib " + (f.field() == Field.SADDR ? "saddr" : "daddr") + " type local: " + addr
                        + (loc ? " is" : " is not") + " a local address";
                return loc;
            }
            if (m instanceof Match.NumgenIs n) {
                String expr = "numgen random mod " + n.modulus();
                if (n.modulus() == 1) {
                    detail[0] = expr + " is always 0";
                    return n.value() == 0;
                }
                boolean hit = pick(n.modulus(), n.value()) == 0;
                detail[0] = expr + (hit ? " drew " + n.value() : " drew other than " + n.value())
                        + " (p " + (hit ? Probability.of(1, n.modulus()) : Probability.of(n.modulus() - 1, n.modulus()))
                        + "; both outcomes are traced)";
                return hit;
            }
            if (m instanceof Match.MarkBits b) {
                boolean set = (mark & b.mask()) != 0;
                detail[0] = "mark " + hex(mark) + (set ? " has " + hex(b.mask()) + " set" : " and " + hex(b.mask()) + " == 0");
                return set;
            }
            throw new TraceException("match the tracer does not model: " + m);
        }

        private int choose(int n, List<?> alternatives) {
            int k = taken.size();
            int i = k < forced.size() ? forced.get(k) : 0;
            if (i >= n) throw new TraceException("internal: pick " + i + " of " + n);
            taken.add(i);
            arity.add(n);
            odds = odds.times(Probability.of(1, n));
            Object alt = alternatives.get(i);
            String label = alt instanceof Statement.Target t ? t.ip().withPort(t.port())
                    : alt instanceof Verdict v ? v.text() : String.valueOf(alt);
            choiceLabels.add("numgen pick " + i + "/" + n + " -> " + label);
            return i;
        }

        /** A {@code numgen random mod n == value} match: choice 0 is the draw that matches, choice 1 all others. */
        private int pick(int n, int value) {
            int k = taken.size();
            int i = k < forced.size() ? forced.get(k) : 0;
            if (i >= 2) throw new TraceException("internal: pick " + i + " of a match");
            taken.add(i);
            arity.add(2);
            odds = odds.times(i == 0 ? Probability.of(1, n) : Probability.of(n - 1, n));
            choiceLabels.add("numgen mod " + n + (i == 0 ? " == " : " != ") + value);
            return i;
        }

        private boolean isLocal(IpAddress a) { return a.isLoopback() || local.contains(a); }

        private List<Value> key(List<Field> fields) {
            List<Value> out = new ArrayList<>(fields.size());
            for (Field f : fields) out.add(value(f));
            return out;
        }

        private Value value(Field f) {
            switch (f) {
                case SADDR: return new Value.Addr(packet.src());
                case DADDR: return new Value.Addr(dst);
                case L4PROTO: return new Value.Proto(packet.proto());
                default: return new Value.Port(dport);
            }
        }

        private String fieldValue(Field f) {
            StringBuilder sb = new StringBuilder();
            NftSyntax.value(sb, value(f));
            return sb.toString();
        }

        private String keyText(List<Field> fields) {
            return fields.stream().map(this::fieldValue).collect(Collectors.joining(" . "));
        }

        private String fieldsText(List<Field> fields) {
            String fam = table.family().nftFamily();
            return fields.stream().map(f -> {
                switch (f) {
                    case SADDR: return fam + " saddr";
                    case DADDR: return fam + " daddr";
                    case L4PROTO: return "meta l4proto";
                    default: return "th dport";
                }
            }).collect(Collectors.joining(" . "));
        }

        private void step(String chain, int depth, String ruleText, String detail) {
            steps.add(new Step(hook, chain, depth, ruleText, detail));
        }

        private void note(String chain, String detail) { steps.add(new Step(hook, chain, 0, null, detail)); }

        private static int markBit(Rule r) {
            for (Match m : r.matches()) if (m instanceof Match.MarkBits b) return b.mask();
            return 0;
        }

        private static String hex(int v) { return "0x" + Integer.toHexString(v); }
    }
}
