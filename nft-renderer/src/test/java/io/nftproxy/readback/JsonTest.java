package io.nftproxy.readback;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JsonTest {
    @Test
    void parsesEveryValueKind() {
        Object v = Json.parse(" {\"a\": [1, -2, 0, true, false, null, \"x\"], \"b\": {}, \"c\": []} ");
        Map<?, ?> m = (Map<?, ?>) v;
        assertEquals(Arrays.asList(1L, -2L, 0L, true, false, null, "x"), m.get("a"));
        assertEquals(Map.of(), m.get("b"));
        assertEquals(List.of(), m.get("c"));
        assertEquals(List.of("a", "b", "c"), List.copyOf(m.keySet()), "insertion order kept");
        assertNull(Json.parse("null"));
        assertEquals(Long.MAX_VALUE, Json.parse("9223372036854775807"));
    }

    @Test
    void decodesEscapes() {
        assertEquals("q\"b\\s/\b\f\n\r\t\u00e9\u20ac", Json.parse("\"q\\\"b\\\\s\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC\""));
    }

    @Test
    void aStringRepeatedInOneDocumentIsOneInstanceWhetherEscapedOrNot() {
        List<?> l = (List<?>) Json.parse("[{\"chain\": \"service-a\"}, {\"chain\": \"service-a\"}, \"s\\u0065rvice-a\", \"x\\ny\", \"x\\ny\"]");
        Map<?, ?> a = (Map<?, ?>) l.get(0);
        Map<?, ?> b = (Map<?, ?>) l.get(1);
        String keyA = (String) a.keySet().iterator().next();
        String keyB = (String) b.keySet().iterator().next();
        assertSame(keyA, keyB);
        assertSame(a.get("chain"), b.get("chain"));
        assertEquals("service-a", l.get(2));
        assertSame(a.get("chain"), l.get(2));
        assertEquals("x\ny", l.get(3));
        assertSame(l.get(3), l.get(4));
    }

    @Test
    void resultIsUnmodifiable() {
        Object v = Json.parse("{\"a\": [1]}");
        assertThrows(UnsupportedOperationException.class, () -> ((Map<String, Object>) v).put("b", 1L));
        assertThrows(UnsupportedOperationException.class, () -> ((List<Object>) ((Map<?, ?>) v).get("a")).add(2L));
    }

    @Test
    void rejectsBadInputWithTheOffset() {
        assertError("{\"a\": 1,}", "expected a string key at offset 8");
        assertError("[1, 2,]", "unexpected character ']' at offset 6");
        assertError("{\"a\": 1} x", "unexpected content after the document at offset 9");
        assertError("{\"a\": 1, \"a\": 2}", "duplicate key \"a\" at offset 9");
        assertError("[01]", "leading zero in number at offset 1");
        assertError("1.5", "non-integer numbers are not supported at offset 1");
        assertError("99999999999999999999", "integer out of range at offset 0");
        assertError("\"a\nb\"", "unescaped control character U+000A in string at offset 2");
        assertError("\"\\x\"", "bad escape \\'x' at offset 2");
        assertError("\"\\u12g4\"", "bad hex digit in \\u escape at offset 5");
        assertError("\"abc", "unterminated string at offset 4");
        assertError("[1 2]", "expected ',' or ']' at offset 3");
        assertError("{\"a\" 1}", "expected ':' at offset 5");
        assertError("", "unexpected end of input, expected a value at offset 0");
        assertError("tru", "unexpected character 't' at offset 0");
        assertError("// c\n1", "unexpected character '/' at offset 0");
    }

    @Test
    void boundsNesting() {
        String deep = "[".repeat(Json.MAX_DEPTH + 2) + "]".repeat(Json.MAX_DEPTH + 2);
        Json.JsonException e = assertThrows(Json.JsonException.class, () -> Json.parse(deep));
        assertTrue(e.getMessage().startsWith("nesting deeper than"), e.getMessage());
        Json.parse("[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH));
    }

    @Test
    void writesWhatItReads() {
        String text = "{\"a\": [1, \"x\\\"y\", null, true], \"b\": {\"c\": \"\\u0001\"}}";
        assertEquals(text, Json.write(Json.parse(text)));
    }

    private static void assertError(String input, String message) {
        Json.JsonException e = assertThrows(Json.JsonException.class, () -> Json.parse(input), input);
        assertEquals(message, e.getMessage(), input);
    }
}
