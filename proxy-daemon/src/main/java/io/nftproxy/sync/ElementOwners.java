package io.nftproxy.sync;

import io.nftproxy.nft.Element;
import io.nftproxy.service.ServicePortName;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which service ports contribute each element of a table, and whose copy the table holds: the first contributor's
 * in service-port order. Nearly every element has one contributor (only a ClusterIP's cluster-ips element shared by
 * its ports, or a hairpin element two Services share, has more), so a sole owner is kept inline and a sorted map is
 * made only for a second one: a map per element cost about 64 bytes each, 3 MB of live heap at 10k Services × 2.
 */
final class ElementOwners {
    private record Sole(ServicePortName owner, Element element) {}

    /** Per key: a {@link Sole}, or a {@code TreeMap<ServicePortName, Element>} once a second owner came. */
    private final Map<Element.ElementKey, Object> byKey = new HashMap<>();

    /** Records {@code owner}'s copy of the element; a second copy from the same owner is ignored. */
    void add(ServicePortName owner, Element element) {
        Element.ElementKey key = element.id();
        Object held = byKey.get(key);
        if (held == null) {
            byKey.put(key, new Sole(owner, element));
        } else if (held instanceof Sole sole) {
            if (sole.owner().equals(owner)) return;
            TreeMap<ServicePortName, Element> many = new TreeMap<>();
            many.put(sole.owner(), sole.element());
            many.put(owner, element);
            byKey.put(key, many);
        } else {
            sorted(held).putIfAbsent(owner, element);
        }
    }

    void remove(ServicePortName owner, Element.ElementKey key) {
        Object held = byKey.get(key);
        if (held instanceof Sole sole) {
            if (sole.owner().equals(owner)) byKey.remove(key);
        } else if (held != null) {
            TreeMap<ServicePortName, Element> many = sorted(held);
            many.remove(owner);
            if (many.size() == 1) byKey.put(key, new Sole(many.firstKey(), many.firstEntry().getValue()));
        }
    }

    /** The copy the table holds, or null when no service port contributes the key. */
    Element first(Element.ElementKey key) {
        Object held = byKey.get(key);
        if (held == null) return null;
        if (held instanceof Sole sole) return sole.element();
        return sorted(held).firstEntry().getValue();
    }

    void clear() { byKey.clear(); }

    @SuppressWarnings("unchecked")
    private static TreeMap<ServicePortName, Element> sorted(Object held) {
        return (TreeMap<ServicePortName, Element>) held;
    }
}
