package io.nftproxy.proxy;

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
        return label(s, "metadata.namespace", false, "a DNS-1123 label ([a-z0-9-], at most 63 bytes)");
    }

    public static String serviceName(String s) {
        return label(s, "metadata.name", true, "a DNS-1035 label ([a-z][a-z0-9-], at most 63 bytes)");
    }

    /** A port name may be empty (a single unnamed port); otherwise a DNS-1123 label. */
    public static String portName(String s, String field) {
        if (s == null || s.isEmpty()) return "";
        return label(s, field, false, "empty or a DNS-1123 label ([a-z0-9-], at most 63 bytes)");
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

    private static String label(String s, String field, boolean letterFirst, String allowed) {
        if (s == null || s.isEmpty() || s.length() > 63 || !isLabel(s, 0, s.length(), letterFirst)) {
            throw new InvalidInputException(field, s, allowed);
        }
        return s;
    }

    /** {@code [a-z0-9]([-a-z0-9]*[a-z0-9])?}, or with {@code letterFirst} {@code [a-z]([-a-z0-9]*[a-z0-9])?}. */
    private static boolean isLabel(String s, int from, int to, boolean letterFirst) {
        if (from >= to) return false;
        char first = s.charAt(from);
        if (letterFirst ? !(first >= 'a' && first <= 'z') : !isAlnum(first)) return false;
        if (!isAlnum(s.charAt(to - 1))) return false;
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
                if (!isLabel(s, start, i, false)) return false;
                start = i + 1;
            }
        }
        return true;
    }

    private static boolean isAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
}
