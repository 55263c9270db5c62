package io.nftproxy.nft;

import io.nftproxy.net.IpFamily;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A model of the kernel's {@code kube-proxy} tables that applies transactions with the kernel's semantics: all or
 * nothing (applied to a copy, swapped in on success), "add" idempotent, "delete"/"flush" of a missing object
 * refused, an object still referenced refused on delete, dangling references refused on add. The in-memory fake
 * NftClient and the differ's tests run on it. It is a real model, not a mock: its failures are the kernel's.
 */
public final class InMemoryTables {
    /** A refused command: the kernel's errno name, and the command in nft syntax. */
    public static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final String errno;

        Refused(String errno, String what) {
            super(errno + ": " + what);
            this.errno = errno;
        }

        public String errno() { return errno; }
    }

    private static final class TableState {
        final Map<String, Chain> chains = new LinkedHashMap<>();
        final Map<String, List<Rule>> rules = new LinkedHashMap<>();
        final Map<String, NftSet> sets = new LinkedHashMap<>();
        final Map<String, Map<Element.ElementKey, Element>> elements = new LinkedHashMap<>();

        TableState copy() {
            TableState t = new TableState();
            t.chains.putAll(chains);
            rules.forEach((k, v) -> t.rules.put(k, new ArrayList<>(v)));
            t.sets.putAll(sets);
            elements.forEach((k, v) -> t.elements.put(k, new LinkedHashMap<>(v)));
            return t;
        }
    }

    private final Map<IpFamily, TableState> tables = new EnumMap<>(IpFamily.class);
    private long transactions;

    /** Applies every command or none. */
    public synchronized void apply(Transaction tx) {
        TableState current = tables.get(tx.family());
        TableState work = current == null ? null : current.copy();
        boolean exists = current != null;
        for (Command c : tx.commands()) {
            NftObject o = c.object();
            if (o instanceof TableSpec) {
                switch (c.verb()) {
                    case ADD -> { if (!exists) { work = new TableState(); exists = true; } }
                    case CREATE -> {
                        if (exists) throw refused("EEXIST", c, tx);
                        work = new TableState();
                        exists = true;
                    }
                    case DELETE -> {
                        if (!exists) throw refused("ENOENT", c, tx);
                        work = null;
                        exists = false;
                    }
                    case FLUSH -> {
                        if (!exists) throw refused("ENOENT", c, tx);
                        work.rules.replaceAll((k, v) -> new ArrayList<>());
                        work.elements.replaceAll((k, v) -> new LinkedHashMap<>());
                    }
                    default -> throw refused("EOPNOTSUPP", c, tx);
                }
                continue;
            }
            if (!exists) throw refused("ENOENT", c, tx);
            apply(work, c, tx);
        }
        if (exists) tables.put(tx.family(), work);
        else tables.remove(tx.family());
        transactions++;
    }

    private void apply(TableState t, Command c, Transaction tx) {
        NftObject o = c.object();
        if (o instanceof Chain ch) {
            Chain old = t.chains.get(ch.name());
            switch (c.verb()) {
                case ADD, CREATE -> {
                    if (old != null) {
                        if (c.verb() == Verb.CREATE || !Objects.equals(old.hook(), ch.hook())) throw refused("EEXIST", c, tx);
                    } else {
                        t.chains.put(ch.name(), ch);
                        t.rules.put(ch.name(), new ArrayList<>());
                    }
                }
                case FLUSH -> {
                    if (old == null) throw refused("ENOENT", c, tx);
                    t.rules.put(ch.name(), new ArrayList<>());
                }
                case DELETE -> {
                    if (old == null) throw refused("ENOENT", c, tx);
                    if (!t.rules.get(ch.name()).isEmpty() || referenced(t, ch.name())) throw refused("EBUSY", c, tx);
                    t.chains.remove(ch.name());
                    t.rules.remove(ch.name());
                }
                default -> throw refused("EOPNOTSUPP", c, tx);
            }
        } else if (o instanceof Rule r) {
            if (c.verb() != Verb.ADD) throw refused("EOPNOTSUPP", c, tx);
            List<Rule> l = t.rules.get(r.chain());
            if (l == null) throw refused("ENOENT", c, tx);
            for (String target : r.targets()) if (!t.chains.containsKey(target)) throw refused("ENOENT", c, tx);
            for (String set : r.setRefs()) if (!t.sets.containsKey(set)) throw refused("ENOENT", c, tx);
            l.add(r);
        } else if (o instanceof NftSet s) {
            NftSet old = t.sets.get(s.name());
            switch (c.verb()) {
                case ADD, CREATE -> {
                    if (old != null) {
                        if (c.verb() == Verb.CREATE || !sameDefinition(old, s)) throw refused("EEXIST", c, tx);
                    } else {
                        t.sets.put(s.name(), s);
                        t.elements.put(s.name(), new LinkedHashMap<>());
                    }
                }
                case FLUSH -> {
                    if (old == null) throw refused("ENOENT", c, tx);
                    t.elements.put(s.name(), new LinkedHashMap<>());
                }
                case DELETE -> {
                    if (old == null) throw refused("ENOENT", c, tx);
                    for (List<Rule> rs : t.rules.values()) {
                        for (Rule r : rs) if (r.setRefs().contains(s.name())) throw refused("EBUSY", c, tx);
                    }
                    t.sets.remove(s.name());
                    t.elements.remove(s.name());
                }
                default -> throw refused("EOPNOTSUPP", c, tx);
            }
        } else if (o instanceof Element e) {
            Map<Element.ElementKey, Element> m = t.elements.get(e.set());
            if (m == null) throw refused("ENOENT", c, tx);
            Element old = m.get(e.id());
            switch (c.verb()) {
                case ADD, CREATE -> {
                    String target = e.value() == null ? null : e.value().target();
                    if (target != null && !t.chains.containsKey(target)) throw refused("ENOENT", c, tx);
                    if (old != null) {
                        if (c.verb() == Verb.CREATE || !Objects.equals(old.value(), e.value())) throw refused("EEXIST", c, tx);
                    } else {
                        m.put(e.id(), e);
                    }
                }
                case DELETE -> {
                    if (old == null) throw refused("ENOENT", c, tx);
                    m.remove(e.id());
                }
                default -> throw refused("EOPNOTSUPP", c, tx);
            }
        }
    }

    /** Comments may differ (the kernel keeps the first); type, flags and timeout may not. */
    private static boolean sameDefinition(NftSet a, NftSet b) {
        return a.keyType().equals(b.keyType()) && Objects.equals(a.valueType(), b.valueType())
                && a.flags().equals(b.flags()) && a.timeoutSeconds() == b.timeoutSeconds();
    }

    private static boolean referenced(TableState t, String chain) {
        for (List<Rule> rs : t.rules.values()) for (Rule r : rs) if (r.targets().contains(chain)) return true;
        for (Map<Element.ElementKey, Element> m : t.elements.values()) {
            for (Element e : m.values()) if (e.value() != null && chain.equals(e.value().target())) return true;
        }
        return false;
    }

    private static Refused refused(String errno, Command c, Transaction tx) {
        Transaction one = new Transaction(tx.family()).command(c.verb(), c.object());
        return new Refused(errno, one.script(io.nftproxy.nft.Capabilities.baseline()).strip());
    }

    public synchronized boolean exists(IpFamily f) { return tables.containsKey(f); }

    public synchronized long transactionCount() { return transactions; }

    /** The table as it stands, or null when it does not exist. */
    public synchronized TableContent dump(IpFamily f) {
        TableState t = tables.get(f);
        if (t == null) return null;
        TableContent.Builder b = TableContent.builder(f);
        t.sets.values().forEach(b::set);
        t.chains.values().forEach(b::chain);
        t.rules.values().forEach(l -> l.forEach(b::rule));
        t.elements.values().forEach(m -> m.values().forEach(b::element));
        return b.build();
    }

    /** Deletes every table, as {@code nft flush ruleset} would. For tamper tests. */
    public synchronized void flushRuleset() { tables.clear(); }
}
