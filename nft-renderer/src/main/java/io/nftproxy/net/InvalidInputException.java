package io.nftproxy.net;

/**
 * An API-derived value that failed re-validation. The message names the field, the value (made printable) and
 * what is allowed, so operators can find the offending object with one grep.
 */
public final class InvalidInputException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String field;
    private final String allowed;

    public InvalidInputException(String field, String value, String allowed) {
        super(field + ": invalid value " + printable(value) + " (allowed: " + allowed + ")");
        this.field = field;
        this.allowed = allowed;
    }

    public String field() { return field; }
    public String allowed() { return allowed; }

    /**
     * Quotes a text we wrote ourselves (a skip reason, which embeds untrusted values only through
     * {@link #printable}) for a log line: whole, with only what could end the quotes or forge a line escaped
     * ({@code \"}, {@code \\}, control and line-separator characters). Operators read these; cutting them or
     * turning every quote into {@code \u0022} made them unreadable (issue 10).
     */
    public static String quoted(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || c == 0x7f || c == 0x85 || c == 0x2028 || c == 0x2029) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    /** Quotes a value for a log line, escaping anything that could forge a line or a field. */
    public static String printable(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        int shown = 0;
        for (int i = 0; i < s.length() && shown < 80; i++, shown++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
                b.append(c);
            } else {
                b.append(String.format("\\u%04x", (int) c));
            }
        }
        if (s.length() > 80) b.append("...(").append(s.length()).append(" chars)");
        return b.append('"').toString();
    }
}
