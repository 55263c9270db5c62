package io.nftproxy.proxy;

/**
 * Why an object, or a part of one, was skipped. Returned as a value from the pure core so the daemon can log it
 * (rate-limited) and count it in {@code nftproxy_invalid_objects_total{kind,reason}}.
 */
public record Diagnostic(String kind, String object, String field, String reason) {
    @Override public String toString() {
        return "skipped kind=" + kind + " object=" + InvalidInputException.printable(object) + " field=" + field
                + " reason=" + InvalidInputException.printable(reason);
    }
}
