package io.nftproxy.readback;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A small strict JSON reader (RFC 8259) for the documents {@code nft -j} prints, so the pure core needs no JSON
 * library. Objects become insertion-ordered {@code Map<String, Object>}, arrays {@code List<Object>}, numbers
 * {@code Long}, and {@code true/false/null} become {@code Boolean} and {@code null}. Everything returned is
 * unmodifiable.
 *
 * <p>Strict on purpose: trailing commas, comments, duplicate keys, unescaped control characters, leading zeros,
 * content after the document, and non-integer numbers (nft never prints one) are errors, each reported as a
 * {@link JsonException} naming the character offset. Nesting is capped so a hostile document cannot overflow the
 * stack.
 */
public final class Json {
    /** Deeper than any nft document (a rule is about 8 levels); bounds recursion on hostile input. */
    static final int MAX_DEPTH = 256;

    private final String s;
    private int pos;
    /**
     * Every distinct string of this document, once: a listing repeats the same keys ({@code family}, {@code table},
     * {@code expr} ...) and values (the table's name, a chain's name in each of its rules) in every object, and a
     * 10k table's listing (about 10 MB) is read whole at a restart, so the tree's peak is mostly these copies.
     */
    private final Map<String, String> seen = new HashMap<>();

    private Json(String s) { this.s = s; }

    /** Parses one complete JSON document. */
    public static Object parse(String text) {
        if (text == null) throw new JsonException("no input", 0);
        Json j = new Json(text);
        j.ws();
        Object v = j.value(0);
        j.ws();
        if (j.pos != text.length()) throw j.error("unexpected content after the document");
        return v;
    }

    /** Compact JSON text of a value this class produced (or any Map/List/String/Number/Boolean/null), for messages. */
    public static String write(Object v) {
        if (v instanceof String str) {
            StringBuilder b = new StringBuilder("\"");
            for (int i = 0; i < str.length(); i++) {
                char c = str.charAt(i);
                if (c == '"' || c == '\\') b.append('\\').append(c);
                else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                else b.append(c);
            }
            return b.append('"').toString();
        } else if (v instanceof Map<?, ?> m) {
            return m.entrySet().stream().map(e -> write(String.valueOf(e.getKey())) + ": " + write(e.getValue()))
                    .collect(Collectors.joining(", ", "{", "}"));
        } else if (v instanceof List<?> l) {
            return l.stream().map(Json::write).collect(Collectors.joining(", ", "[", "]"));
        }
        return String.valueOf(v);
    }

    /** A syntax error; the message ends with the offset (0-based, in chars) where it was found. */
    public static final class JsonException extends IllegalArgumentException {
        JsonException(String message, int offset) { super(message + " at offset " + offset); }
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) throw error("nesting deeper than " + MAX_DEPTH);
        if (pos >= s.length()) throw error("unexpected end of input, expected a value");
        char c = s.charAt(pos);
        switch (c) {
            case '{': return object(depth);
            case '[': return array(depth);
            case '"': return string();
            case 't': return literal("true", Boolean.TRUE);
            case 'f': return literal("false", Boolean.FALSE);
            case 'n': return literal("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) return number();
                throw error("unexpected character " + describe(c));
        }
    }

    private Map<String, Object> object(int depth) {
        pos++; // '{'
        Map<String, Object> m = new LinkedHashMap<>();
        ws();
        if (peek() == '}') { pos++; return Collections.unmodifiableMap(m); }
        while (true) {
            ws();
            if (peek() != '"') throw error("expected a string key");
            int keyAt = pos;
            String k = string();
            ws();
            expect(':');
            ws();
            Object v = value(depth + 1);
            if (m.containsKey(k)) throw new JsonException("duplicate key \"" + k + "\"", keyAt);
            m.put(k, v);
            ws();
            char c = next("',' or '}'");
            if (c == '}') return Collections.unmodifiableMap(m);
            if (c != ',') { pos--; throw error("expected ',' or '}'"); }
        }
    }

    private List<Object> array(int depth) {
        pos++; // '['
        List<Object> l = new ArrayList<>();
        ws();
        if (peek() == ']') { pos++; return Collections.unmodifiableList(l); }
        while (true) {
            ws();
            l.add(value(depth + 1));
            ws();
            char c = next("',' or ']'");
            if (c == ']') return Collections.unmodifiableList(l);
            if (c != ',') { pos--; throw error("expected ',' or ']'"); }
        }
    }

    private String string() {
        pos++; // opening quote
        // Most strings have no escape: taken straight from the text, without a builder.
        int end = pos;
        while (end < s.length()) {
            char c = s.charAt(end);
            if (c == '"') {
                String plain = s.substring(pos, end);
                pos = end + 1;
                return seen.computeIfAbsent(plain, k -> k);
            }
            if (c == '\\' || c < 0x20) break;
            end++;
        }
        StringBuilder b = new StringBuilder();
        while (true) {
            if (pos >= s.length()) throw error("unterminated string");
            char c = s.charAt(pos++);
            if (c == '"') return seen.computeIfAbsent(b.toString(), k -> k);
            if (c < 0x20) { pos--; throw error("unescaped control character " + describe(c) + " in string"); }
            if (c != '\\') { b.append(c); continue; }
            char e = next("an escape character");
            switch (e) {
                case '"': case '\\': case '/': b.append(e); break;
                case 'b': b.append('\b'); break;
                case 'f': b.append('\f'); break;
                case 'n': b.append('\n'); break;
                case 'r': b.append('\r'); break;
                case 't': b.append('\t'); break;
                case 'u':
                    if (pos + 4 > s.length()) throw error("truncated \\u escape");
                    int cp = 0;
                    for (int i = 0; i < 4; i++) {
                        int d = Character.digit(s.charAt(pos + i), 16);
                        if (d < 0) throw new JsonException("bad hex digit in \\u escape", pos + i);
                        cp = cp * 16 + d;
                    }
                    pos += 4;
                    b.append((char) cp);
                    break;
                default:
                    pos--;
                    throw error("bad escape \\" + describe(e));
            }
        }
    }

    private Long number() {
        int start = pos;
        if (peek() == '-') pos++;
        if (pos >= s.length() || !isDigit(s.charAt(pos))) throw error("expected a digit");
        if (s.charAt(pos) == '0' && pos + 1 < s.length() && isDigit(s.charAt(pos + 1))) throw error("leading zero in number");
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
        if (pos < s.length() && (s.charAt(pos) == '.' || s.charAt(pos) == 'e' || s.charAt(pos) == 'E')) {
            throw error("non-integer numbers are not supported");
        }
        try {
            return Long.parseLong(s.substring(start, pos));
        } catch (NumberFormatException ex) {
            throw new JsonException("integer out of range", start);
        }
    }

    private Object literal(String word, Object v) {
        if (!s.startsWith(word, pos)) throw error("unexpected character " + describe(s.charAt(pos)));
        pos += word.length();
        return v;
    }

    private void ws() {
        while (pos < s.length()) {
            char c = s.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
            pos++;
        }
    }

    private char peek() { return pos < s.length() ? s.charAt(pos) : '\0'; }

    private char next(String expected) {
        if (pos >= s.length()) throw error("unexpected end of input, expected " + expected);
        return s.charAt(pos++);
    }

    private void expect(char c) {
        if (pos >= s.length() || s.charAt(pos) != c) throw error("expected '" + c + "'");
        pos++;
    }

    private static boolean isDigit(char c) { return c >= '0' && c <= '9'; }

    private static String describe(char c) {
        return c >= 0x20 && c < 0x7f ? "'" + c + "'" : String.format("U+%04X", (int) c);
    }

    private JsonException error(String message) { return new JsonException(message, pos); }
}
