package io.nftproxy.source;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A typed view of one JSON/YAML node that knows its field path. Every accessor checks the API type and throws
 * {@link ManifestFormatException} naming the path and the types, never the value: a wrong type skips the whole
 * object, as the API server would have refused it. A missing field or an explicit {@code null} reads as null.
 */
final class ApiNode {
    private final JsonNode node;
    private final String path;

    ApiNode(JsonNode node, String path) {
        this.node = node;
        this.path = path;
    }

    JsonNode raw() { return node; }

    private String child(String name) { return path.isEmpty() ? name : path + "." + name; }

    private static boolean absent(JsonNode n) { return n == null || n.isNull() || n.isMissingNode(); }

    private JsonNode get(String name) {
        JsonNode n = node.get(name);
        return absent(n) ? null : n;
    }

    boolean has(String name) { return get(name) != null; }

    /** The field, or null when absent; throws when it is present but not {@code ok}. */
    private JsonNode typed(String name, Predicate<JsonNode> ok, String expected) {
        JsonNode n = get(name);
        if (n != null && !ok.test(n)) throw wrongType(child(name), expected, n);
        return n;
    }

    String str(String name) {
        JsonNode n = typed(name, JsonNode::isString, "a string");
        return n == null ? null : n.stringValue();
    }

    Integer integer(String name) {
        JsonNode n = typed(name, JsonNode::isIntegralNumber, "an integer");
        if (n == null) return null;
        if (!n.canConvertToInt()) throw new ManifestFormatException(child(name), "integer out of 32-bit range");
        return n.intValue();
    }

    Boolean bool(String name) {
        JsonNode n = typed(name, JsonNode::isBoolean, "a boolean");
        return n == null ? null : n.booleanValue();
    }

    /** {@code IntOrString} (targetPort): either spelling, returned as text. */
    String intOrString(String name) {
        JsonNode n = typed(name, e -> e.isString() || e.isIntegralNumber() && e.canConvertToInt(), "an integer or a string");
        if (n == null) return null;
        return n.isString() ? n.stringValue() : Integer.toString(n.intValue());
    }

    /** A nested object, or null when absent. */
    ApiNode obj(String name) {
        JsonNode n = typed(name, JsonNode::isObject, "a map");
        return n == null ? null : new ApiNode(n, child(name));
    }

    /** A nested object; an empty one when absent, whose fields then all read as absent. */
    ApiNode objOrEmpty(String name) {
        ApiNode n = obj(name);
        return n != null ? n : new ApiNode(JsonNodeFactory.instance.objectNode(), child(name));
    }

    /**
     * The entries of a list of objects, each mapped by {@code read} once every entry is known to be a map; empty when
     * absent. A null entry is kept out.
     */
    <T> List<T> objList(String name, Function<ApiNode, T> read) {
        return items(name, "a list", JsonNode::isObject, "a map", ApiNode::new).stream().map(read).toList();
    }

    /** A list of strings; empty when absent. */
    List<String> strList(String name) {
        return items(name, "a list of strings", JsonNode::isString, "a string", (e, p) -> e.stringValue());
    }

    /** A list of strings that many objects repeat ({@code ipFamilies}), each {@linkplain #sharedStr shared}; empty when absent. */
    List<String> sharedStrList(String name) {
        return items(name, "a list of strings", JsonNode::isString, "a string", (e, p) -> e.stringValue().intern());
    }

    /** A list's entries of the expected type, each read with its path; absent and null entries are kept out. */
    private <T> List<T> items(String name, String expected, Predicate<JsonNode> ok, String itemExpected,
                              BiFunction<JsonNode, String, T> read) {
        JsonNode n = typed(name, JsonNode::isArray, expected);
        if (n == null) return List.of();
        List<T> out = new ArrayList<>(n.size());
        int i = 0;
        for (JsonNode e : n.values()) {
            String p = child(name) + "[" + i++ + "]";
            if (absent(e)) continue;
            if (!ok.test(e)) throw wrongType(p, itemExpected, e);
            out.add(read.apply(e, p));
        }
        return out;
    }

    /**
     * A string that thousands of objects repeat (a namespace, a label, a protocol, a node's name), as the one shared
     * copy: the JVM's string table holds it only while some object refers to it.
     */
    String sharedStr(String name) {
        String s = str(name);
        return s == null ? null : s.intern();
    }

    /** A map of strings to strings (labels, annotations); empty when absent. */
    Map<String, String> strMap(String name) { return strMap(name, k -> true); }

    /**
     * The entries of a map of strings whose key passes {@code keep}, keys and values {@linkplain #sharedStr shared};
     * every entry's type is checked all the same, so a map the API server would refuse is refused whatever is kept.
     */
    Map<String, String> strMap(String name, Predicate<String> keep) {
        JsonNode n = typed(name, JsonNode::isObject, "a map of strings");
        if (n == null) return Map.of();
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : n.properties()) {
            if (absent(e.getValue())) continue;
            if (!e.getValue().isString()) {
                throw wrongType(child(name) + "[" + e.getKey() + "]", "a string", e.getValue());
            }
            if (keep.test(e.getKey())) out.put(e.getKey().intern(), e.getValue().stringValue().intern());
        }
        return out;
    }

    static ManifestFormatException wrongType(String path, String expected, JsonNode found) {
        return new ManifestFormatException(path, "expected " + expected + ", found " + typeName(found));
    }

    static String typeName(JsonNode n) {
        return switch (n.getNodeType()) {
            case STRING -> "a string";
            case NUMBER -> n.isIntegralNumber() ? "an integer" : "a decimal number";
            case BOOLEAN -> "a boolean";
            case ARRAY -> "a list";
            case OBJECT, POJO -> "a map";
            case BINARY -> "binary data";
            case NULL, MISSING -> "nothing";
        };
    }
}
