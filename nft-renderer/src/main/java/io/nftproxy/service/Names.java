package io.nftproxy.service;

import io.nftproxy.net.InvalidInputException;

/**
 * Re-validation of the API names that end up inside nft text (chain names, element comments). kube-proxy copies
 * them verbatim because the API server validated them; we check again, since a manifest file, an aggregated or
 * fake API server, or another API version can hand us anything, and a ';' in a chain name deletes tables.
 */
public final class Names {
    // Hand-written checks instead of regexes: validation runs for every name of every object on every sync, and
    // the matchers were a tenth of a 50k-service render. Same languages as the regexes in the comments.

    private Names() {}

    public static String namespace(String s) {
        return label(s, "metadata.namespace", "a DNS-1123 label ([a-z0-9-], at most 63 bytes)");
    }

    /**
     * A DNS-1123 label, not the older DNS-1035 one: with RelaxedServiceNameValidation (beta, on by default in the
     * 1.36 API server this is tested against) a Service may be named "1kubernetes", and kube-proxy programs it.
     * Refusing the leading digit left such a Service without rules; upstream's e2e "DNS should work with a service
     * name that starts with a digit" creates one.
     */
    public static String serviceName(String s) {
        return label(s, "metadata.name", "a DNS-1123 label ([a-z0-9-], at most 63 bytes)");
    }

    /** A port name may be empty (a single unnamed port); otherwise a DNS-1123 label. */
    public static String portName(String s, String field) {
        if (s == null || s.isEmpty()) return "";
        return label(s, field, "empty or a DNS-1123 label ([a-z0-9-], at most 63 bytes)");
    }

    /** Node names and slice names are compared, never written into nft text; still refuse garbage early. */
    public static String subdomain(String s, String field) {
        if (s == null || s.length() > 253 || !isSubdomain(s)) {
            throw new InvalidInputException(field, s, "a DNS-1123 subdomain (at most 253 bytes)");
        }
        return s;
    }

    public static int port(Integer p, String field) {
        if (p == null || p < 1 || p > 65535) {
            throw new InvalidInputException(field, String.valueOf(p), "an integer 1..65535");
        }
        return p;
    }

    private static String label(String s, String field, String allowed) {
        if (s == null || s.isEmpty() || s.length() > 63 || !isLabel(s, 0, s.length())) {
            throw new InvalidInputException(field, s, allowed);
        }
        return s;
    }

    /** {@code [a-z0-9]([-a-z0-9]*[a-z0-9])?}. */
    private static boolean isLabel(String s, int from, int to) {
        if (from >= to || !isAlnum(s.charAt(from)) || !isAlnum(s.charAt(to - 1))) return false;
        for (int i = from + 1; i < to - 1; i++) {
            char c = s.charAt(i);
            if (c != '-' && !isAlnum(c)) return false;
        }
        return true;
    }

    /** {@code label(\.label)*} with DNS-1123 labels. */
    private static boolean isSubdomain(String s) {
        int start = 0;
        for (int i = 0; i <= s.length(); i++) {
            if (i == s.length() || s.charAt(i) == '.') {
                if (!isLabel(s, start, i)) return false;
                start = i + 1;
            }
        }
        return true;
    }

    private static boolean isAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
}
