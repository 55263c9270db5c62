package io.nftproxy.service;

import io.nftproxy.net.InvalidInputException;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A skip reason in the log is whole and readable, and still cannot forge a line or a field. */
class DiagnosticTest {
    @Test
    void aLongReasonIsLoggedWholeWithReadableQuotes() {
        String reason = new InvalidInputException("spec.externalIPs", "300.1.2.3", "an IPv4 or IPv6 address").getMessage()
                + "; and then some more words so that the sentence is well over the eighty characters that values get";
        String line = new Diagnostic("Service", "a/web", "spec.externalIPs", reason).toString();
        assertTrue(line.endsWith("reason=\"spec.externalIPs: invalid value \\\"300.1.2.3\\\" (allowed: an IPv4 or IPv6 address);"
                + " and then some more words so that the sentence is well over the eighty characters that values get\""), line);
        assertFalse(line.contains("\\u0022") || line.contains("chars)"), line);
    }

    @Test
    void aReasonCannotForgeALine() {
        String line = new Diagnostic("Service", "a/web", "f", "one\nlevel=error msg=forged\u2028x").toString();
        assertFalse(line.contains("\n") || line.contains("\u2028"), line);
        assertTrue(line.contains("one\\u000alevel=error"), line);
    }

    @Test
    void untrustedValuesStayShortened() {
        String v = "x".repeat(500);
        assertTrue(InvalidInputException.printable(v).endsWith("...(500 chars)\""));
        assertEquals("\"a\\\\b\"", InvalidInputException.quoted("a\\b"));
    }
}
