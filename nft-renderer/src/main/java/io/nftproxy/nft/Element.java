package io.nftproxy.nft;

import java.util.Comparator;
import java.util.List;

/**
 * An element of a set or map. Identity (for diffing) is the set and key; value, data and comment are payload, so a
 * changed value is a delete-and-add of the same key. {@code value} is a verdict-map element's verdict;
 * {@code data} a data-map element's address and port (the {@code flat} layout's endpoint maps). At most one is set.
 */
public record Element(String set, List<Value> key, Verdict value, String comment, Statement.Target data)
        implements NftObject {
    public static final Comparator<Element> ORDER = (a, b) -> {
        int c = a.set.compareTo(b.set);
        if (c != 0) return c;
        for (int i = 0; i < Math.min(a.key.size(), b.key.size()); i++) {
            c = a.key.get(i).compareTo(b.key.get(i));
            if (c != 0) return c;
        }
        return Integer.compare(a.key.size(), b.key.size());
    };

    public Element {
        key = List.copyOf(key);
        if (value != null && data != null) throw new IllegalArgumentException("an element has a verdict or data, not both");
    }

    public Element(String set, List<Value> key, Verdict value, String comment) {
        this(set, key, value, comment, null);
    }

    /** An element of a data map: {@code key : ip . port}. */
    public static Element data(String set, List<Value> key, Statement.Target data) {
        return new Element(set, key, null, null, data);
    }

    public ElementKey id() { return new ElementKey(set, key); }

    /** The identity of an element within its table. */
    public record ElementKey(String set, List<Value> key) {
        /**
         * List.hashCode multiplies by 31 per position, so a key repeating one address ({@code hairpin-connections}:
         * {@code ip . ip . proto . port}) got a hash whose low bits hardly vary, and element maps degraded into long
         * bins (a 3-command diff took 100 ms at 1k services). Each part is mixed in with a multiplier and finaliser.
         */
        @Override public int hashCode() {
            int h = set.hashCode();
            for (Value v : key) {
                h = h * 0x9e3779b1 + v.hashCode();
                h ^= h >>> 15;
                h *= 0x85ebca6b;
                h ^= h >>> 13;
            }
            return h;
        }
    }
}
