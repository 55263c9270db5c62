package io.nftproxy.proxy;

import java.util.regex.Pattern;

/**
 * Re-validation of the API names that end up inside nft text (chain names, element comments). kube-proxy copies
 * them verbatim because the API server validated them; we check again, since a manifest file, an aggregated or
 * fake API server, or another API version can hand us anything, and a ';' in a chain name deletes tables.
 */
public final class Names {
    private static final Pattern DNS1123_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    private static final Pattern DNS1035_LABEL = Pattern.compile("[a-z]([-a-z0-9]*[a-z0-9])?");
    private static final Pattern DNS1123_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private Names() {}

    public static String namespace(String s) {
        return label(s, "metadata.namespace", DNS1123_LABEL, "a DNS-1123 label ([a-z0-9-], at most 63 bytes)");
    }

    public static String serviceName(String s) {
        return label(s, "metadata.name", DNS1035_LABEL, "a DNS-1035 label ([a-z][a-z0-9-], at most 63 bytes)");
    }

    /** A port name may be empty (a single unnamed port); otherwise a DNS-1123 label. */
    public static String portName(String s, String field) {
        if (s == null || s.isEmpty()) return "";
        return label(s, field, DNS1123_LABEL, "empty or a DNS-1123 label ([a-z0-9-], at most 63 bytes)");
    }

    /** Node names and slice names are compared, never written into nft text; still refuse garbage early. */
    public static String subdomain(String s, String field) {
        if (s == null || s.length() > 253 || !DNS1123_SUBDOMAIN.matcher(s).matches()) {
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

    private static String label(String s, String field, Pattern p, String allowed) {
        if (s == null || s.isEmpty() || s.length() > 63 || !p.matcher(s).matches()) {
            throw new InvalidInputException(field, s, allowed);
        }
        return s;
    }
}
