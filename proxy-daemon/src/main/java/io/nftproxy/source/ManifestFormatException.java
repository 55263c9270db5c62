package io.nftproxy.source;

/** An object whose fields do not have the API's types: a string where a number belongs, a list where a map belongs. */
public final class ManifestFormatException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String field;

    ManifestFormatException(String field, String message) {
        super(message);
        this.field = field;
    }

    public String field() { return field; }
}
