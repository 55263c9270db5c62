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
import io.nftproxy.service.NodeContext;
import io.nftproxy.service.ServicePortName;
import io.nftproxy.render.ChainNames;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Walks the first packet of a new connection through a rendered {@link TableContent}, hook by hook in netfilter's
 * order, and says where it goes and why. Pure: the table is only read.
 *
 * <p>Model: {@code ct state new} holds; {@code ct status dnat} holds once a DNAT happened on this path; dynamic
 * (affinity) sets are empty, as they are for a client's first connection. A NAT statement ends its base chain
 * (nft's nat expressions are terminal and accept). Every random pick (a numgen DNAT map, a numgen verdict map, a
 * {@code numgen random mod K V} match, which holds with probability 1/K, or the slot of a DNAT through a named
 * data map) forks the trace; each branch is evaluated to its end, because masquerade can differ per endpoint
 * (hairpin), and carries the exact probability of its picks.
 *
 * <p>The {@code flat} layout's forms, as the kernel runs them: a DNAT through
 * {@code KEY . numgen random mod N map @m} looks up {@code KEY . slot} and, without an element there, breaks its
 * rule (earlier statements, a mark, have run) so the packet goes on with the next rule; a {@code continue} verdict goes on with the next rule of the same
 * chain; a lookup of a verdict map as a set is membership only; {@code tcp dport} and the other protocol-bound
 * ports carry nft's implicit {@code meta l4proto} match, so a rule using one never holds for another protocol.
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
        // Once per trace, not per branch and hook: a fast table of 50k services has 200k chains to look through.
        Map<String, List<Chain>> bases = table.chains().values().stream().filter(Chain::isBase)
                .sorted(Comparator.comparingInt(c -> c.hook().priority()))
                .collect(Collectors.groupingBy(c -> c.hook().hook()));
        List<Trace.Branch> branches = new ArrayList<>();
        // Depth-first over the random picks: run once with a forced prefix of choices (index 0 beyond it), then
        // queue every untried alternative of the choices the run made on its own.
        Deque<List<Integer>> pending = new ArrayDeque<>();
        pending.push(List.of());
        List<Integer[]> done = new ArrayList<>();
        while (!pending.isEmpty()) {
            List<Integer> forced = pending.pop();
            Run run = new Run(table, bases, local, p, forced);
            branches.add(run.execute());
            done.add(run.taken.toArray(Integer[]::new));
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
        return new Trace(p, IntStream.range(0, branches.size()).boxed()
                .sorted(Comparator.comparing(done::get, Arrays::compare)).map(branches::get).toList());
    }

    /** How a chain or rule ended. NEXT: go on with the next rule; RETURN: leave this chain for its caller. */
    private enum Flow { NEXT, RETURN, ACCEPT, DROP }

    /** One linear evaluation of the packet, following the forced choices. */
    private static final class Run {
        private final TableContent table;
        private final Map<String, List<Chain>> bases;
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
        private String service;

        Run(TableContent table, Map<String, List<Chain>> bases, Set<IpAddress> local, Packet packet, List<Integer> forced) {
            this.table = table;
            this.bases = bases;
            this.local = local;
            this.packet = packet;
            this.syntax = new NftSyntax(table.family(), Capabilities.baseline());
            this.forced = forced;
            this.dst = packet.dst();
            this.dport = packet.dport();
        }

        Trace.Branch execute() {
            boolean host = packet.origin() == Origin.HOST;
            if (!(host ? hook("output") && hook("postrouting") : hook("prerouting"))) return finish(null);
            if (isLocal(dst)) {
                // A host's packet loops back through lo; the first packet keeps its conntrack entry, still new, so
                // filter-input sees it: a host's connection to its own NodePort without endpoints is rejected there
                // (checked on kernel 6.18). nat chains do not run again; prerouting's filter chain re-checks
                // firewall-ips, which output already passed for this daddr.
                note(null, "routing: " + dst + " is a local address -> "
                        + (host ? "over loopback to the input path" : "input path"));
                if (!hook("input")) return finish(null);
                return finish(host ? "to a local socket over loopback" : "delivered to a local socket");
            }
            if (host) return finish("sent out of the node");
            note(null, "routing: " + dst + " is not a local address -> forward path");
            if (!hook("forward") || !hook("postrouting")) return finish(null);
            return finish("forwarded");
        }

        private Trace.Branch finish(String delivery) {
            Outcome o = end;
            if (o == null) {
                o = dnat == null ? new Outcome.Untouched(masquerade, delivery)
                        : new Outcome.Dnat(List.of(new Outcome.Target(dnat.ip(), dnat.port(), masquerade, affinitySet, delivery)));
            }
            return new Trace.Branch(choiceLabels, steps, o, odds, service);
        }

        /** Runs the base chains of one hook in priority order; false if the packet was dropped or rejected. */
        private boolean hook(String name) {
            hook = name;
            for (Chain c : bases.getOrDefault(name, List.of())) {
                note(c.name(), "base chain " + c.name() + " (type " + c.hook().type() + ", hook " + name
                        + ", priority " + c.hook().priority() + ")");
                if (chain(c.name(), 0) == Flow.DROP) return false;
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
                if (f != Flow.NEXT) return f;
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
                if (!match(m, detail)) {
                    step(chain, depth, text, Step.NO_MATCH + detail[0]);
                    return Flow.NEXT;
                }
                why.add(detail[0]);
                if (m instanceof Match.SetLookup l && l.set().equals(HAIRPIN_SET)) hairpinKey = keyText(l.fields()) + " in @" + l.set();
            }
            for (Statement s : r.statements()) {
                Flow f = statement(s, r, text, chain, depth, why, hairpinKey);
                if (f != null) return f;
            }
            step(chain, depth, text, String.join("; ", why));
            return Flow.NEXT;
        }

        /**
         * Runs one statement of a rule whose matches held; null to go on with the rule's next statement, else how
         * the rule ended (its step is then written). {@code why} collects the rule's explanation so far.
         */
        private Flow statement(Statement s, Rule r, String text, String chain, int depth, List<String> why, String hairpinKey) {
            if (s instanceof Statement.MarkOr m) {
                mark |= m.mark();
                // Without a comment, the rule up to its mark says why (a flat NodePort rule goes on to its dnat).
                markSetBy = chain + ": " + (r.comment() != null ? r.comment()
                        : syntax.ruleText(new Rule(chain, r.matches(), List.of(m), null)));
                why.add("mark set to " + NftSyntax.hex(mark));
                return null;
            } else if (s instanceof Statement.MarkXor m) {
                mark ^= m.mark();
                why.add("mark set to " + NftSyntax.hex(mark));
                return null;
            } else if (s instanceof Statement.UpdateSet u) {
                affinitySet = u.set();
                why.add("client " + fieldValue(u.field()) + " recorded in @" + u.set());
                return null;
            } else if (s instanceof Statement.Masquerade) {
                String reason;
                if (hairpinKey != null) reason = "hairpin: " + hairpinKey;
                else if (r.matches().stream().anyMatch(m -> m instanceof Match.MarkBits) && markSetBy != null) {
                    reason = "mark " + NftSyntax.hex(markBit(r)) + " set in " + markSetBy;
                } else reason = why.isEmpty() ? "unconditional masquerade in " + chain : String.join("; ", why);
                masquerade = new Outcome.Masquerade(true, reason);
                explain(chain, depth, text, why, "MASQUERADE: source NATed to the outgoing interface address");
                return Flow.ACCEPT;
            } else if (s instanceof Statement.Dnat d) {
                int n = d.targets().size();
                int i = n > 1 ? choose(n, d.targets().stream().map(t -> t.ip().withPort(t.port())).toList()) : 0;
                Statement.Target t = d.targets().get(i);
                dnatTo(t, chain);
                String pick = n > 1 ? " (numgen random mod " + n + " picked " + i + "; every pick is traced)" : "";
                explain(chain, depth, text, why, "DNAT to " + t.ip().withPort(t.port()) + pick);
                return Flow.ACCEPT;
            } else if (s instanceof Statement.DnatMap d) {
                return dnatMap(d, text, chain, depth, why);
            } else if (s instanceof Statement.Reject) {
                explain(chain, depth, text, why, "REJECT (ICMP port unreachable)");
                end = new Outcome.Reject(chain, text);
                return Flow.DROP;
            } else if (s instanceof Statement.Decide d) {
                explain(chain, depth, text, why, d.verdict().text() + (d.verdict() instanceof Verdict.Continue ? nextRule(chain) : ""));
                return verdict(d.verdict(), chain, text, depth);
            } else if (s instanceof Statement.VmapLookup v) {
                String foreign = foreignPort(v.fields());
                if (foreign != null) {
                    explain(chain, depth, text, why, foreign + ": the rule stops at its vmap");
                    return Flow.NEXT;
                }
                String key = keyText(v.fields());
                Element e = table.element(v.map(), key(v.fields()));
                if (e == null || e.value() == null) {
                    explain(chain, depth, text, why, syntax.fieldsText(v.fields()) + " " + key + " not in @" + v.map()
                            + ": no element, on with the next rule");
                    return Flow.NEXT;
                }
                matched(e, v);
                explain(chain, depth, text, why, syntax.fieldsText(v.fields()) + " " + key + " found in @" + v.map()
                        + (e.comment() != null ? " (" + e.comment() + ")" : "") + " -> " + e.value().text()
                        + (e.value() instanceof Verdict.Continue ? nextRule(chain) : ""));
                return verdict(e.value(), chain, v.map() + " element " + key + " : " + e.value().text(), depth);
            } else if (s instanceof Statement.NumgenVmap n) {
                int i = choose(n.targets().size(), n.targets().stream().map(Verdict::text).toList());
                Verdict v = n.targets().get(i);
                explain(chain, depth, text, why, "numgen random mod " + n.targets().size() + " picked " + i + " -> " + v.text()
                        + (n.targets().size() > 1 ? " (every pick is traced)" : ""));
                return verdict(v, chain, text, depth);
            }
            throw new TraceException("statement the tracer does not model: " + s);
        }

        /**
         * Names the service port a dispatch element belongs to, once per branch (the first dispatch map that knows
         * the packet): by the element's comment, kube-proxy's {@code ns/svc:port}, which every flat element and every
         * no-endpoint element carries; else by the port chain its verdict goes to, whose name holds the same.
         */
        private void matched(Element e, Statement.VmapLookup v) {
            if (service != null) return;
            String who = e.comment();
            if (who == null && e.value().target() != null) {
                who = ChainNames.servicePortOf(e.value().target()).map(ServicePortName::elementComment).orElse(null);
            }
            if (who == null) return;
            int colon = who.lastIndexOf(':');
            String name = colon < 0 ? who : who.substring(0, colon) + " port " + who.substring(colon + 1);
            boolean nodePort = !v.fields().contains(Field.DADDR);
            service = name + " (" + (nodePort ? "NodePort " : "") + packet.proto().nftName() + " " + packet.dport()
                    + "), element of @" + v.map();
        }

        /**
         * {@code dnat ... to KEY . numgen random mod N map @m}: every slot 0 … N-1 is its own branch with odds 1/N
         * (none for N = 1); a slot with an element DNATs to its data and ends the base chain, a slot without one
         * makes the kernel's lookup break the rule: what ran before it in the rule (a mark) stays, the packet goes
         * on with the next rule.
         */
        private Flow dnatMap(Statement.DnatMap d, String text, String chain, int depth, List<String> why) {
            String foreign = foreignPort(d.key());
            if (foreign != null) {
                explain(chain, depth, text, why, foreign + ": the rule stops before its dnat");
                return Flow.NEXT;
            }
            int n = d.numgenModulus();
            List<Value> prefix = key(d.key());
            List<Element> slots = new ArrayList<>(n);
            List<String> labels = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                List<Value> k = new ArrayList<>(prefix);
                k.add(new Value.Index(i));
                Element e = table.element(d.map(), k);
                slots.add(e);
                labels.add(e == null ? "no element in @" + d.map()
                        : e.data() == null ? "element without data in @" + d.map() : e.data().ip().withPort(e.data().port()));
            }
            int i = n > 1 ? choose(n, labels) : 0;
            Element e = slots.get(i);
            String via = "DNAT via @" + d.map() + " slot " + i + " of " + n;
            String element = (prefix.isEmpty() ? "" : keyText(d.key()) + " . ") + i;
            String traced = n > 1 ? "; every slot is traced" : "";
            if (e == null) {
                explain(chain, depth, text, why, via + ": no element " + element + ", so the dnat does nothing and the rule stops"
                        + nextRule(chain) + traced);
                return Flow.NEXT;
            }
            if (e.data() == null) {
                throw new TraceException("element " + element + " of @" + d.map() + " has no address . port to DNAT to");
            }
            Statement.Target t = e.data();
            dnatTo(t, chain);
            explain(chain, depth, text, why, via + " -> " + t.ip().withPort(t.port()) + " (element " + element + traced + ")");
            return Flow.ACCEPT;
        }

        private void dnatTo(Statement.Target t, String chain) {
            if (t.ip().family() != table.family()) throw new TraceException("dnat target " + t.ip() + " of the wrong family in " + chain);
            dnat = t;
            dst = t.ip();
            dport = t.port();
        }

        private static String nextRule(String chain) { return " (on with the next rule of " + chain + ")"; }

        private Flow verdict(Verdict v, String chain, String source, int depth) {
            if (v instanceof Verdict.Jump j) {
                Flow f = chain(j.chain(), depth + 1);
                if (f == Flow.RETURN) {
                    step(chain, depth, null, "back in " + chain);
                    return Flow.NEXT;
                }
                return f;
            } else if (v instanceof Verdict.Goto g) {
                // goto does not return here: falling off the target returns to this chain's caller.
                return chain(g.chain(), depth + 1);
            } else if (v instanceof Verdict.Drop) {
                end = new Outcome.Drop(chain, source);
                return Flow.DROP;
            } else if (v instanceof Verdict.Accept) {
                return Flow.ACCEPT;
            } else if (v instanceof Verdict.Return) {
                return Flow.RETURN;
            } else if (v instanceof Verdict.Continue) {
                return Flow.NEXT;
            }
            throw new TraceException("verdict the tracer does not model: " + v);
        }

        private boolean match(Match m, String[] detail) {
            if (m instanceof Match.CtStateNew) {
                detail[0] = "ct state new (first packet of a new connection)";
                return true;
            } else if (m instanceof Match.CtStatusDnat) {
                detail[0] = dnat != null ? "ct status dnat (the connection was DNATed)" : "ct status dnat is false (no DNAT happened)";
                return dnat != null;
            } else if (m instanceof Match.SetLookup l) {
                // A protocol-bound port carries nft's implicit meta l4proto match: negated or not, the lookup
                // does not hold for a packet of another protocol.
                String foreign = foreignPort(l.fields());
                if (foreign != null) {
                    detail[0] = foreign;
                    return false;
                }
                Element e = table.element(l.set(), key(l.fields()));
                boolean in = e != null;
                String what = syntax.fieldsText(l.fields()) + " " + keyText(l.fields());
                NftSet set = table.set(l.set());
                String note = "";
                if (!in && set != null && (set.flags().contains("dynamic") || l.set().startsWith("affinity-"))) {
                    note = " (affinity sets are empty at trace time: this is the client's first connection)";
                } else if (set != null && set.isMap()) {
                    note = " (a map used as a set: membership only"
                            + (in && e.value() != null ? ", its element's " + e.value().text() + " is not applied" : "") + ")";
                }
                detail[0] = what + (in ? " in @" : " not in @") + l.set() + note;
                return in != l.negated();
            } else if (m instanceof Match.AddrIn a) {
                IpAddress addr = a.field() == Field.SADDR ? packet.src() : dst;
                boolean in = a.prefixes().stream().anyMatch(p -> p.contains(addr));
                String set = a.prefixes().stream().map(IpPrefix::toString).collect(Collectors.joining(", ", "{ ", " }"));
                detail[0] = syntax.fieldsText(List.of(a.field())) + " " + addr + (in ? " in " : " not in ") + set;
                return in != a.negated();
            } else if (m instanceof Match.ProtoIs p) {
                detail[0] = "meta l4proto " + packet.proto().nftName() + (p.protocol() == packet.proto() ? "" : " is not " + p.protocol().nftName());
                return p.protocol() == packet.proto();
            } else if (m instanceof Match.IifName i) {
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
            } else if (m instanceof Match.FibLocal f) {
                IpAddress addr = f.field() == Field.SADDR ? packet.src() : dst;
                boolean loc = isLocal(addr);
                detail[0] = "fib " + (f.field() == Field.SADDR ? "saddr" : "daddr") + " type local: " + addr
                        + (loc ? " is" : " is not") + " a local address";
                return loc;
            } else if (m instanceof Match.NumgenIs n) {
                String expr = "numgen random mod " + n.modulus();
                if (n.modulus() == 1) {
                    detail[0] = expr + " is always 0";
                    return n.value() == 0;
                }
                boolean hit = pick(n.modulus(), n.value()) == 0;
                detail[0] = expr + (hit ? " drew " + n.value() : " drew other than " + n.value())
                        + " (p " + (hit ? new Probability(1, n.modulus()) : new Probability(n.modulus() - 1, n.modulus()))
                        + "; both outcomes are traced)";
                return hit;
            } else if (m instanceof Match.MarkBits b) {
                boolean set = (mark & b.mask()) != 0;
                detail[0] = "mark " + NftSyntax.hex(mark)
                        + (set ? " has " + NftSyntax.hex(b.mask()) + " set" : " and " + NftSyntax.hex(b.mask()) + " == 0");
                return set;
            }
            throw new TraceException("match the tracer does not model: " + m);
        }

        /** Why {@code fields} cannot hold: a protocol-bound port ({@code tcp dport} …) of another protocol; or null. */
        private String foreignPort(List<Field> fields) {
            return fields.stream().filter(f -> f.impliedProtocol() != null && f.impliedProtocol() != packet.proto()).findFirst()
                    .map(f -> syntax.fieldsText(List.of(f)) + " holds only for " + f.impliedProtocol().nftName()
                            + " packets (nft adds meta l4proto " + f.impliedProtocol().nftName() + "), this one is "
                            + packet.proto().nftName())
                    .orElse(null);
        }

        /**
         * One random pick among {@code labels.size() == n} alternatives, each with probability 1/n: the forced choice
         * for this position, or 0 for a first run; the search traces every other one as its own branch.
         */
        private int choose(int n, List<String> labels) {
            int i = taken.size() < forced.size() ? forced.get(taken.size()) : 0;
            if (i >= n) throw new TraceException("internal: pick " + i + " of " + n);
            taken.add(i);
            arity.add(n);
            odds = odds.times(new Probability(1, n));
            choiceLabels.add("numgen pick " + i + "/" + n + " -> " + labels.get(i));
            return i;
        }

        /** A {@code numgen random mod n == value} match: choice 0 is the draw that matches, choice 1 all others. */
        private int pick(int n, int value) {
            int i = taken.size() < forced.size() ? forced.get(taken.size()) : 0;
            if (i >= 2) throw new TraceException("internal: pick " + i + " of a match");
            taken.add(i);
            arity.add(2);
            odds = odds.times(i == 0 ? new Probability(1, n) : new Probability(n - 1, n));
            choiceLabels.add("numgen mod " + n + (i == 0 ? " == " : " != ") + value);
            return i;
        }

        private boolean isLocal(IpAddress a) { return a.isLoopback() || local.contains(a); }

        private List<Value> key(List<Field> fields) { return fields.stream().map(this::value).toList(); }

        /** The packet's value of a field, as it stands now (after a DNAT: the new destination). */
        private Value value(Field f) {
            return switch (f) {
                case SADDR -> new Value.Addr(packet.src());
                case DADDR -> new Value.Addr(dst);
                case L4PROTO -> new Value.Proto(packet.proto());
                case DPORT, TCP_DPORT, UDP_DPORT, SCTP_DPORT -> new Value.Port(dport);
            };
        }

        private String fieldValue(Field f) {
            StringBuilder sb = new StringBuilder();
            NftSyntax.value(sb, value(f));
            return sb.toString();
        }

        private String keyText(List<Field> fields) {
            return fields.stream().map(this::fieldValue).collect(Collectors.joining(" . "));
        }

        private void step(String chain, int depth, String ruleText, String detail) {
            steps.add(new Step(hook, chain, depth, ruleText, detail));
        }

        /** Adds {@code last} to the rule's explanation {@code why} and writes the rule's step. */
        private void explain(String chain, int depth, String text, List<String> why, String last) {
            why.add(last);
            step(chain, depth, text, String.join("; ", why));
        }

        private void note(String chain, String detail) { steps.add(new Step(hook, chain, 0, null, detail)); }

        private static int markBit(Rule r) {
            for (Match m : r.matches()) if (m instanceof Match.MarkBits b) return b.mask();
            return 0;
        }
    }
}
