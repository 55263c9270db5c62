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
    public record ElementKey(String set, List<Value> key) {}
}
