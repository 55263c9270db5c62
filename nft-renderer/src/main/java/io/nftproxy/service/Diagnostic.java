package io.nftproxy.service;

import io.nftproxy.net.InvalidInputException;

/**
 * Why an object, or a part of one, was skipped, or, when {@code kept}, why a part that was kept deserves a warning. Returned as a value from the pure core so the daemon can log it
 * (rate-limited) and count it in {@code nftproxy_invalid_objects_total{kind,field}}.
 */
public record Diagnostic(String kind, String object, String field, String reason, boolean kept) {
    /** Something skipped. */
    public Diagnostic(String kind, String object, String field, String reason) {
        this(kind, object, field, reason, false);
    }

    @Override public String toString() {
        return (kept ? "accepted" : "skipped") + " kind=" + kind + " object=" + InvalidInputException.printable(object) + " field=" + field
                + " reason=" + InvalidInputException.quoted(reason);
    }
}
