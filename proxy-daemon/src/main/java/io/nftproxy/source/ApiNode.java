package io.nftproxy.source;

import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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

    String path() { return path; }

    JsonNode raw() { return node; }

    private String child(String name) { return path.isEmpty() ? name : path + "." + name; }

    private static boolean absent(JsonNode n) { return n == null || n.isNull() || n.isMissingNode(); }

    private JsonNode get(String name) {
        JsonNode n = node.get(name);
        return absent(n) ? null : n;
    }

    boolean has(String name) { return get(name) != null; }

    String str(String name) {
        JsonNode n = get(name);
        if (n == null) return null;
        if (!n.isString()) throw wrongType(child(name), "a string", n);
        return n.stringValue();
    }

    Integer integer(String name) {
        JsonNode n = get(name);
        if (n == null) return null;
        if (!n.isIntegralNumber()) throw wrongType(child(name), "an integer", n);
        if (!n.canConvertToInt()) throw new ManifestFormatException(child(name), "integer out of 32-bit range");
        return n.intValue();
    }

    Boolean bool(String name) {
        JsonNode n = get(name);
        if (n == null) return null;
        if (!n.isBoolean()) throw wrongType(child(name), "a boolean", n);
        return n.booleanValue();
    }

    /** {@code IntOrString} (targetPort): either spelling, returned as text. */
    String intOrString(String name) {
        JsonNode n = get(name);
        if (n == null) return null;
        if (n.isString()) return n.stringValue();
        if (n.isIntegralNumber() && n.canConvertToInt()) return Integer.toString(n.intValue());
        throw wrongType(child(name), "an integer or a string", n);
    }

    /** A nested object, or null when absent. */
    ApiNode obj(String name) {
        JsonNode n = get(name);
        if (n == null) return null;
        if (!n.isObject()) throw wrongType(child(name), "a map", n);
        return new ApiNode(n, child(name));
    }

    /** The entries of a list of objects; empty when absent. A null entry is kept out. */
    List<ApiNode> objList(String name) {
        JsonNode n = get(name);
        if (n == null) return List.of();
        if (!n.isArray()) throw wrongType(child(name), "a list", n);
        List<ApiNode> out = new ArrayList<>(n.size());
        int i = 0;
        for (JsonNode e : n.values()) {
            String p = child(name) + "[" + i++ + "]";
            if (absent(e)) continue;
            if (!e.isObject()) throw wrongType(p, "a map", e);
            out.add(new ApiNode(e, p));
        }
        return out;
    }

    /** A list of strings; empty when absent. */
    List<String> strList(String name) {
        JsonNode n = get(name);
        if (n == null) return List.of();
        if (!n.isArray()) throw wrongType(child(name), "a list of strings", n);
        List<String> out = new ArrayList<>(n.size());
        int i = 0;
        for (JsonNode e : n.values()) {
            if (absent(e)) { i++; continue; }
            if (!e.isString()) throw wrongType(child(name) + "[" + i + "]", "a string", e);
            out.add(e.stringValue());
            i++;
        }
        return out;
    }

    /** A map of strings to strings (labels, annotations); empty when absent. */
    Map<String, String> strMap(String name) {
        JsonNode n = get(name);
        if (n == null) return Map.of();
        if (!n.isObject()) throw wrongType(child(name), "a map of strings", n);
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : n.properties()) {
            if (absent(e.getValue())) continue;
            if (!e.getValue().isString()) {
                throw wrongType(child(name) + "[" + e.getKey() + "]", "a string", e.getValue());
            }
            out.put(e.getKey(), e.getValue().stringValue());
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
