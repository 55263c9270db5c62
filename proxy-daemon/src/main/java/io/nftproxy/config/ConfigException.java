package io.nftproxy.config;

import tools.jackson.databind.JsonNode;

import java.util.List;

/**
 * A configuration value that is not allowed: names the field, the value and what is allowed. A whole file's
 * problems come as one exception ({@link #of}) so an operator fixes them in one round, not one per restart.
 */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String field;
    private final transient List<ConfigException> all;

    public ConfigException(String field, Object value, String allowed) {
        this(field, null, value, allowed);
    }

    /**
     * A setting that has a file field and a flag: both are named, so the message is the same whichever of them the
     * value came from. {@code field} null: a flag alone.
     */
    public ConfigException(String field, String flag, Object value, String allowed) {
        super((field == null ? flag : flag == null ? field : field + " (" + flag + ")") + ": invalid value " + quote(value)
                + "; allowed: " + allowed);
        this.field = field == null ? flag : field;
        this.all = List.of(this);
    }

    /** A problem that is no single value's, with {@code message} whole: {@code where} is the file (or flag) it concerns. */
    private ConfigException(String where, String message) {
        super(where + ": " + message);
        this.field = where;
        this.all = List.of(this);
    }

    /**
     * The file as a whole cannot be used (it does not parse, is empty, holds no map): {@code --config FILE: message},
     * so the message names the file, and the problem's line and column when {@code message} has them.
     */
    public static ConfigException inFile(java.nio.file.Path file, String message) {
        return new ConfigException("--config " + file, message);
    }

    /** A problem of {@code field} that is not its value's (an unknown field, a missing one), in {@code message}'s words. */
    public static ConfigException about(String field, String message) {
        return new ConfigException(field, message);
    }

    private ConfigException(List<ConfigException> all) {
        super(String.join("; ", all.stream().map(Throwable::getMessage).toList()));
        this.field = all.get(0).field;
        this.all = List.copyOf(all);
    }

    /** One exception for several problems (the first one's field), or the problem itself when there is one. */
    public static ConfigException of(List<ConfigException> problems) {
        if (problems.isEmpty()) throw new IllegalArgumentException("no problems");
        return problems.size() == 1 ? problems.get(0) : new ConfigException(problems);
    }

    /** The field of the first problem. */
    public String field() { return field; }

    /** Every problem, in the order of the file. */
    public List<ConfigException> all() { return all; }

    /**
     * The value as the user wrote it: a scalar of a file as its text (a string without the JSON quotes the node's
     * {@code toString} would add), a map or list in flow style, a duration in Go's spelling.
     */
    private static String quote(Object v) {
        if (v == null || v instanceof JsonNode n && n.isNull()) return "null";
        String s = v instanceof java.time.Duration d ? GoDuration.format(d)
                : v instanceof JsonNode n ? (n.isValueNode() ? n.asString() : n.toString()) : String.valueOf(v);
        s = s.replaceAll("[\\p{Cntrl}]", "?");
        if (s.length() > 100) s = s.substring(0, 100) + "...";
        return "\"" + s + "\"";
    }
}
