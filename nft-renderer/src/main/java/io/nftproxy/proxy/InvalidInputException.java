package io.nftproxy.proxy;

/**
 * An API-derived value that failed re-validation. The message names the field, the value (made printable) and
 * what is allowed, so operators can find the offending object with one grep.
 */
public final class InvalidInputException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String field;
    private final String value;
    private final String allowed;

    public InvalidInputException(String field, String value, String allowed) {
        super(field + ": invalid value " + printable(value) + " (allowed: " + allowed + ")");
        this.field = field;
        this.value = value;
        this.allowed = allowed;
    }

    public String field() { return field; }
    public String value() { return value; }
    public String allowed() { return allowed; }

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
