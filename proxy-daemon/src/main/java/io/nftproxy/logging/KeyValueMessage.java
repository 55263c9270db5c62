package io.nftproxy.logging;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A log message split into its free text and its {@code key=value} pairs, for the JSON format: our messages spell
 * their facts as {@code key={}} in the format string ({@code "listed kind={} objects={}"}), which logfmt shows as
 * they are and which JSON should carry as fields of their own. A pair is a placeholder right after {@code key=} (or
 * {@code key="{}"}) that ends at a space, {@code ;}, {@code ,}, {@code )} or the end; any other placeholder
 * ({@code time={}us}, {@code {}: {}}) is substituted in the text. Keys that are the layout's own fields stay in the
 * text ({@code error} too when the event carries an exception, whose stack trace is the {@code error} field), so no
 * key is ever written twice.
 *
 * @param text   the message without its pairs
 * @param fields the pairs, in the order the message gives them; a key given twice keeps its last value
 */
public record KeyValueMessage(String text, Map<String, String> fields) {
    /** The JSON layout's own fields (nftproxy-log.json), which a message's pair must not shadow. */
    static final Set<String> LAYOUT_FIELDS = Set.of("time", "level", "logger", "thread", "msg");
    static final String ERROR = "error";

    /**
     * Splits a formatted message: {@code format} with SLF4J's {@code {}} placeholders, filled from {@code params}
     * (fewer params than placeholders leave the rest as {@code {}}, as SLF4J does).
     *
     * @param withException whether the event carries an exception (then {@code error} stays in the text)
     */
    public static KeyValueMessage of(String format, Object[] params, boolean withException) {
        if (format == null) return new KeyValueMessage("", Map.of());
        StringBuilder text = new StringBuilder(format.length() + 32);
        Map<String, String> fields = new LinkedHashMap<>();
        int param = 0;
        int i = 0;
        while (i < format.length()) {
            int at = format.indexOf("{}", i);
            if (at < 0) {
                text.append(format, i, format.length());
                break;
            }
            String value = params != null && param < params.length ? String.valueOf(params[param]) : "{}";
            param++;
            boolean quoted = at > 0 && format.charAt(at - 1) == '"' && at + 2 < format.length() && format.charAt(at + 2) == '"';
            int eq = quoted ? at - 2 : at - 1;
            int end = quoted ? at + 3 : at + 2;
            int keyStart = eq;
            while (keyStart > i && isKeyChar(format.charAt(keyStart - 1))) keyStart--;
            String key = eq >= i && eq >= 0 && format.charAt(eq) == '=' ? format.substring(keyStart, eq) : "";
            boolean pair = !key.isEmpty() && Character.isLetter(key.charAt(0))
                    && (keyStart == 0 || format.charAt(keyStart - 1) == ' ' || format.charAt(keyStart - 1) == '(')
                    && (end == format.length() || " ;,)".indexOf(format.charAt(end)) >= 0)
                    && !LAYOUT_FIELDS.contains(key) && !(withException && key.equals(ERROR));
            if (pair) {
                text.append(format, i, keyStart);
                fields.put(key, value);
                i = end;
            } else {
                text.append(format, i, at).append(value);
                i = at + 2;
            }
        }
        return new KeyValueMessage(tidy(text), Collections.unmodifiableMap(fields));
    }

    private static boolean isKeyChar(char c) { return Character.isLetterOrDigit(c) || c == '_' || c == '.'; }

    /** The text once its pairs are gone: no doubled or dangling spaces, no space before a {@code ;} or {@code ,}. */
    private static String tidy(StringBuilder s) {
        return s.toString().replaceAll(" {2,}", " ").replaceAll(" ([;,)])", "$1").replaceAll("\\( ", "(")
                .replaceAll("\\(\\)", "").strip();
    }
}
