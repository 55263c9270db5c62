package io.nftproxy.config;

/** A configuration value that is not allowed: names the field, the value and what is allowed. */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String field;

    public ConfigException(String field, Object value, String allowed) {
        super(field + ": invalid value " + quote(value) + "; allowed: " + allowed);
        this.field = field;
    }

    public String field() { return field; }

    private static String quote(Object v) {
        if (v == null) return "null";
        String s = String.valueOf(v).replaceAll("[\\p{Cntrl}]", "?");
        if (s.length() > 100) s = s.substring(0, 100) + "...";
        return "\"" + s + "\"";
    }
}
