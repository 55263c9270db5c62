package io.nftproxy.diff;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.Command;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.TableSpec;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Value;
import io.nftproxy.nft.Verb;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Cuts a transaction larger than a command budget into an ordered list of transactions, each of which the kernel
 * accepts on the state the previous ones left, so that no single commit holds the nftables commit lock for long
 * (other users of nftables on the node wait on it). A transaction within the budget is returned unchanged, as one:
 * the normal change stays atomic.
 *
 * <p>The commands are regrouped into units that are never cut, and the units are sent in this order:
 * <ol>
 *   <li>the table's own commands, together;</li>
 *   <li>elements that go away, grouped as the new ones below: references are removed before what they point
 *       at, and a Service's dispatch elements leave together;</li>
 *   <li>flushes of chains that go away with this transaction, and rewrites of existing chains whose new rules
 *       use nothing this transaction creates (the flush and all new rules of the chain together, so the chain is
 *       never seen half rewritten);</li>
 *   <li>deletes of sets and chains that are created again under the same name (a definition changed), a chain
 *       with its flush;</li>
 *   <li>new sets and new chains, each alone (nothing refers to them yet);</li>
 *   <li>the rules of every other chain, one chain per unit, a chain after the chains it jumps to, so a rule that
 *       jumps never leads into a chain that is still empty;</li>
 *   <li>new elements (with the delete of the same key's old value), those whose key starts with the same address
 *       together, whatever their set: a Service's {@code cluster-ips}, {@code service-ips},
 *       {@code no-endpoint-services} and {@code firewall-ips} elements (and in the flat layout its
 *       {@code flat-ips-…} and {@code flat-endpoints-…} ones) arrive in one transaction, so that no packet sees
 *       its ClusterIP known (and rejected on unknown ports) before it is dispatched; NodePort elements likewise
 *       by port;</li>
 *   <li>flushes of chains left empty (stale chains, deleted by a later transaction): an element replaced above
 *       (a {@code service-ips} goto that becomes {@code continue} in the flat layout, or leads to another chain)
 *       led to them until its unit, so they keep their rules until then;</li>
 *   <li>deletes of sets and chains that go away, once no rule uses them any more.</li>
 * </ol>
 * Elements come last, so a verdict-map element is sent only after its chain exists with all its rules: during a
 * cold start services appear a batch at a time, each complete. One exception to "never half rewritten": when the
 * transaction re-creates a set or chain under its name, flushes stay before that delete (the kernel refuses to
 * delete what a rule still uses), and a chain rewritten to use something new may be seen empty until its rules
 * arrive. A unit larger than the budget (a
 * chain with more rules than the budget) is sent whole.
 */
public final class TransactionSplitter {
    private TransactionSplitter() {}

    /** The parts of {@code tx}, in the order they must be committed; {@code tx} itself when it fits the budget. */
    public static List<Transaction> split(Transaction tx, int budget) {
        if (budget < 1) throw new IllegalArgumentException("command budget must be at least 1, got " + budget);
        if (tx.size() <= budget) return List.of(tx);
        List<List<Command>> units = units(tx.commands());
        List<Transaction> parts = new ArrayList<>();
        Transaction part = new Transaction(tx.family());
        for (List<Command> unit : units) {
            if (!part.isEmpty() && part.size() + unit.size() > budget) {
                parts.add(part);
                part = new Transaction(tx.family());
            }
            for (Command c : unit) part.command(c.verb(), c.object());
        }
        if (!part.isEmpty()) parts.add(part);
        return List.copyOf(parts);
    }

    private static List<List<Command>> units(List<Command> commands) {
        Set<String> createdChains = new HashSet<>();
        Set<String> createdSets = new HashSet<>();
        Set<String> deletedChains = new HashSet<>();
        Set<String> deletedSets = new HashSet<>();
        Map<String, List<Command>> rules = new LinkedHashMap<>();
        Set<Element.ElementKey> addedElements = new HashSet<>();
        // Only an element deleted and added again (a changed value) needs the added keys; a cold start deletes none,
        // and hashing its hundreds of thousands of keys was a third of the split's time.
        boolean deletesElements = commands.stream().anyMatch(c -> c.verb() == Verb.DELETE && c.object() instanceof Element);
        for (Command c : commands) {
            boolean adds = c.verb() == Verb.ADD || c.verb() == Verb.CREATE;
            Object o = c.object();
            if (o instanceof Chain ch && adds) createdChains.add(ch.name());
            else if (o instanceof Chain ch && c.verb() == Verb.DELETE) deletedChains.add(ch.name());
            else if (o instanceof Chain && c.verb() == Verb.FLUSH) { /* placed below */ }
            else if (o instanceof NftSet s && adds) createdSets.add(s.name());
            else if (o instanceof NftSet s && c.verb() == Verb.DELETE) deletedSets.add(s.name());
            else if (o instanceof Rule r && c.verb() == Verb.ADD) rules.computeIfAbsent(r.chain(), k -> new ArrayList<>()).add(c);
            else if (o instanceof Element e && adds) { if (deletesElements) addedElements.add(e.id()); }
            else if (o instanceof Element && c.verb() == Verb.DELETE) { /* placed below */ }
            else if (!(o instanceof TableSpec)) throw new IllegalArgumentException("cannot split a transaction holding '"
                    + c.verb().nft() + " " + o.getClass().getSimpleName() + "': only the Differ's commands are known");
        }
        // A set or chain deleted and created again under its name (its definition changed) must be unused when it
        // is deleted, before its new users' rules can be added: their flushes cannot wait for those rules.
        boolean recreates = deletedSets.stream().anyMatch(createdSets::contains) || deletedChains.stream().anyMatch(createdChains::contains);

        List<Command> table = new ArrayList<>();
        Map<Object, List<Command>> unlink = new LinkedHashMap<>();
        List<List<Command>> early = new ArrayList<>();
        List<List<Command>> recreated = new ArrayList<>();
        List<List<Command>> removal = new ArrayList<>();
        List<List<Command>> create = new ArrayList<>();
        Map<Object, List<Command>> elements = new LinkedHashMap<>();
        Map<Element.ElementKey, Command> replacedValues = new HashMap<>();
        Map<String, Command> flushOfDeleted = new HashMap<>();
        List<List<Command>> emptied = new ArrayList<>();
        Set<String> lateFlush = new HashSet<>();
        for (Command c : commands) {
            Object o = c.object();
            if (o instanceof TableSpec) {
                table.add(c);
            } else if (o instanceof Element e && c.verb() == Verb.DELETE) {
                if (addedElements.contains(e.id())) replacedValues.put(e.id(), c);
                else unlink.computeIfAbsent(unitOf(e), k -> new ArrayList<>()).add(c);
            } else if (o instanceof Element e) {
                Command old = replacedValues.isEmpty() ? null : replacedValues.remove(e.id());
                List<Command> unit = elements.computeIfAbsent(unitOf(e), k -> new ArrayList<>());
                if (old != null) unit.add(old);
                unit.add(c);
            } else if (o instanceof Chain ch && c.verb() == Verb.FLUSH) {
                List<Command> newRules = rules.get(ch.name());
                if (deletedChains.contains(ch.name())) {
                    flushOfDeleted.put(ch.name(), c);
                } else if (newRules == null) {
                    // A chain left empty (a stale one, deleted later): elements replaced in this transaction may still
                    // lead to it until their unit, so it keeps its rules until then, unless a recreated set or chain
                    // needs it unused first.
                    (recreates ? early : emptied).add(List.of(c));
                } else if (!uses(newRules, createdChains, createdSets)) {
                    List<Command> unit = new ArrayList<>();
                    unit.add(c);
                    unit.addAll(rules.remove(ch.name()));
                    early.add(unit);
                } else if (recreates) {
                    early.add(List.of(c));
                } else {
                    lateFlush.add(ch.name());
                }
            } else if (o instanceof Chain ch && c.verb() == Verb.DELETE) {
                Command flush = flushOfDeleted.remove(ch.name());
                (createdChains.contains(ch.name()) ? recreated : removal).add(flush == null ? List.of(c) : List.of(flush, c));
            } else if (o instanceof NftSet s && c.verb() == Verb.DELETE) {
                (createdSets.contains(s.name()) ? recreated : removal).add(List.of(c));
            } else if (o instanceof Chain || o instanceof NftSet) {
                create.add(List.of(c));
            }
        }
        if (recreates) holdRewritesThatJumpToWaitingChains(early, rules);
        if (!replacedValues.isEmpty()) throw new IllegalArgumentException("element deletes followed by no add of the same key: " + replacedValues.keySet());
        if (!flushOfDeleted.isEmpty()) throw new IllegalArgumentException("chains flushed before their delete but never deleted: " + flushOfDeleted.keySet());

        List<List<Command>> out = new ArrayList<>();
        if (!table.isEmpty()) out.add(table);
        out.addAll(unlink.values());
        out.addAll(early);
        out.addAll(recreated);
        out.addAll(create);
        out.addAll(ruleUnitsTargetsFirst(rules, lateFlush));
        out.addAll(elements.values());
        out.addAll(emptied);
        out.addAll(removal);
        return out;
    }

    /**
     * The unit an added element travels in: its key's leading address, or for the NodePort maps and sets (keyed
     * {@code proto . port}, or in the flat layout {@code port} and {@code port . slot}) its port, so that a flat
     * NodePort is never in its set before its endpoints are in their map; any other element alone.
     */
    private static Object unitOf(Element e) {
        if (e.key().get(0) instanceof Value.Addr a) return a;
        for (Value v : e.key()) if (v instanceof Value.Port p) return p;
        return e.id();
    }

    /**
     * With a set or chain recreated, rewritten chains are flushed early and alone, and stay empty until their new
     * rules arrive in rule order. A chain rewritten whole in an early unit must then not jump to one of them (its
     * new rules would lead a packet into an empty chain that its old rules never reached): such a unit is split the
     * same way, its flush early and its rules with the others, after the rules of the chains they jump to.
     */
    private static void holdRewritesThatJumpToWaitingChains(List<List<Command>> early, Map<String, List<Command>> rules) {
        Set<String> waiting = new HashSet<>();
        for (List<Command> u : early) {
            if (u.size() == 1 && u.get(0).object() instanceof Chain ch && rules.containsKey(ch.name())) waiting.add(ch.name());
        }
        boolean held = true;
        while (held) {
            held = false;
            for (int i = 0; i < early.size(); i++) {
                List<Command> u = early.get(i);
                if (u.size() < 2 || !uses(u.subList(1, u.size()), waiting, Set.of())) continue;
                String chain = ((Chain) u.get(0).object()).name();
                early.set(i, List.of(u.get(0)));
                rules.put(chain, new ArrayList<>(u.subList(1, u.size())));
                waiting.add(chain);
                held = true;
            }
        }
    }

    /** Whether any of the rules jumps or goes to one of {@code chains} or reads one of {@code sets}. */
    private static boolean uses(List<Command> ruleCommands, Set<String> chains, Set<String> sets) {
        for (Command c : ruleCommands) {
            Rule r = (Rule) c.object();
            for (String t : r.targets()) if (chains.contains(t)) return true;
            for (String s : r.setRefs()) if (sets.contains(s)) return true;
        }
        return false;
    }

    /** One unit per chain, each after the units of the chains its rules jump or go to (depth first, post order). */
    private static List<List<Command>> ruleUnitsTargetsFirst(Map<String, List<Command>> rules, Set<String> lateFlush) {
        List<List<Command>> out = new ArrayList<>();
        Set<String> placed = new HashSet<>();
        for (String chain : rules.keySet()) place(chain, rules, lateFlush, placed, out);
        return out;
    }

    private static void place(String chain, Map<String, List<Command>> rules, Set<String> lateFlush, Set<String> placed,
                              List<List<Command>> out) {
        if (!rules.containsKey(chain) || !placed.add(chain)) return;
        List<Command> unit = new ArrayList<>();
        if (lateFlush.contains(chain)) unit.add(new Command(Verb.FLUSH, Chain.regular(chain)));
        for (Command c : rules.get(chain)) {
            for (String t : ((Rule) c.object()).targets()) place(t, rules, lateFlush, placed, out);
            unit.add(c);
        }
        out.add(unit);
    }
}
