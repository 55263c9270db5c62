package io.nftproxy.nft;

import java.util.Comparator;
import java.util.List;

/**
 * An element of a set or map. Identity (for diffing) is the set and key; value and comment are payload, so a
 * changed value is a delete-and-add of the same key.
 */
public record Element(String set, List<Value> key, Verdict value, String comment) implements NftObject {
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
