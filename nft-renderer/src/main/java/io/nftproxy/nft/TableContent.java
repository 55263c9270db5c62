package io.nftproxy.nft;

import io.nftproxy.net.IpFamily;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The complete content of one table: chains (in creation order, with their rules), sets and maps, and elements.
 * Immutable once built; the differ compares two of these, the writer prints one, the tracer walks one.
 */
public final class TableContent {
    public static final String TABLE_NAME = "kube-proxy";
    public static final String TABLE_COMMENT = "rules for kube-proxy";

    private final IpFamily family;
    private final Map<String, Chain> chains;
    private final Map<String, List<Rule>> rules;
    private final Map<String, NftSet> sets;
    private final Map<String, Map<Element.ElementKey, Element>> elements;

    /**
     * Takes over the builder's maps instead of copying them (copying was a third of a 50k-service render); the
     * builder refuses further changes, so the views stay immutable.
     */
    private TableContent(Builder b) {
        this.family = b.family;
        this.chains = Collections.unmodifiableMap(b.chains);
        b.rules.replaceAll((k, v) -> Collections.unmodifiableList(v));
        this.rules = Collections.unmodifiableMap(b.rules);
        this.sets = Collections.unmodifiableMap(b.sets);
        b.elements.replaceAll((k, v) -> Collections.unmodifiableMap(v));
        this.elements = Collections.unmodifiableMap(b.elements);
    }

    public IpFamily family() { return family; }
    public Map<String, Chain> chains() { return chains; }
    public Chain chain(String name) { return chains.get(name); }
    public List<Rule> rules(String chain) { return rules.getOrDefault(chain, List.of()); }
    public Map<String, NftSet> sets() { return sets; }
    public NftSet set(String name) { return sets.get(name); }

    /** The elements of one set or map, keyed by their identity, in insertion order. */
    public Map<Element.ElementKey, Element> elements(String set) { return elements.getOrDefault(set, Map.of()); }

    public List<Element> allElements() {
        List<Element> out = new ArrayList<>();
        elements.values().forEach(m -> out.addAll(m.values()));
        return out;
    }

    public Element element(String set, List<Value> key) { return elements(set).get(new Element.ElementKey(set, key)); }

    public int ruleCount() { return rules.values().stream().mapToInt(List::size).sum(); }

    public static Builder builder(IpFamily family) { return new Builder(family); }

    /** Same content: chains, sets and elements as sets; rules in order within each chain. */
    @Override public boolean equals(Object o) {
        return o instanceof TableContent t && family == t.family && chains.equals(t.chains) && rules.equals(t.rules)
                && sets.equals(t.sets) && elements.equals(t.elements);
    }

    @Override public int hashCode() { return java.util.Objects.hash(family, chains, sets); }

    @Override public String toString() {
        return "table " + family.nftFamily() + " " + TABLE_NAME + " (" + chains.size() + " chains, " + ruleCount()
                + " rules, " + sets.size() + " sets, " + allElements().size() + " elements)";
    }

    /** A builder pre-filled with this table's content. */
    public Builder toBuilder() {
        Builder b = new Builder(family);
        sets.values().forEach(b::set);
        chains.values().forEach(b::chain);
        rules.values().forEach(l -> l.forEach(b::rule));
        elements.values().forEach(m -> m.values().forEach(b::element));
        return b;
    }

    /** Collects a table; rejects duplicates and dangling references, which would fail the kernel transaction. */
    public static final class Builder {
        private final IpFamily family;
        private final Map<String, Chain> chains = new LinkedHashMap<>();
        private final Map<String, List<Rule>> rules = new LinkedHashMap<>();
        private final Map<String, NftSet> sets = new LinkedHashMap<>();
        private final Map<String, Map<Element.ElementKey, Element>> elements = new LinkedHashMap<>();

        private boolean built;

        private Builder(IpFamily family) { this.family = family; }

        private void open() {
            if (built) throw new IllegalStateException("builder already built its table");
        }

        public Builder chain(Chain c) {
            open();
            if (chains.putIfAbsent(c.name(), c) != null) throw new IllegalStateException("duplicate chain " + c.name());
            rules.put(c.name(), new ArrayList<>());
            return this;
        }

        public boolean hasChain(String name) { return chains.containsKey(name); }

        public Builder rule(Rule r) {
            open();
            List<Rule> l = rules.get(r.chain());
            if (l == null) throw new IllegalStateException("rule for unknown chain " + r.chain());
            l.add(r);
            return this;
        }

        public Builder set(NftSet s) {
            open();
            if (sets.putIfAbsent(s.name(), s) != null) throw new IllegalStateException("duplicate set " + s.name());
            elements.put(s.name(), new LinkedHashMap<>());
            return this;
        }

        public boolean hasSet(String name) { return sets.containsKey(name); }

        /** Adds an element; an identical key already present is kept (upstream collapses duplicates, e.g. hairpin). */
        public Builder element(Element e) {
            open();
            Map<Element.ElementKey, Element> m = elements.get(e.set());
            if (m == null) throw new IllegalStateException("element for unknown set " + e.set());
            m.putIfAbsent(e.id(), e);
            return this;
        }

        public TableContent build() {
            open();
            for (List<Rule> l : rules.values()) {
                for (Rule r : l) {
                    for (String t : r.targets()) {
                        if (!chains.containsKey(t)) throw new IllegalStateException("rule in " + r.chain() + " targets missing chain " + t);
                    }
                    for (String s : r.setRefs()) {
                        if (!sets.containsKey(s)) throw new IllegalStateException("rule in " + r.chain() + " uses missing set " + s);
                    }
                }
            }
            for (Map<Element.ElementKey, Element> m : elements.values()) {
                for (Element e : m.values()) {
                    String t = e.value() == null ? null : e.value().target();
                    if (t != null && !chains.containsKey(t)) throw new IllegalStateException("element of " + e.set() + " targets missing chain " + t);
                }
            }
            built = true;
            return new TableContent(this);
        }
    }
}
