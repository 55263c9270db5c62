package io.nftproxy.render;

import io.nftproxy.nft.Chain;

import io.nftproxy.service.Endpoint;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.Protocol;
import io.nftproxy.service.ServicePortName;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Chain and set names exactly as kube-proxy's nftables mode makes them: {@code prefix + H + "-" + base}, where H is
 * the first 8 characters of base32(sha256(base)), and {@code H-base} is cut to 237 bytes plus "..." past 240.
 * Operators' runbooks and tools look these names up, so they must match upstream byte for byte.
 */
public final class ChainNames {
    /** 256 (the nft name limit) minus 16 bytes kept for the prefix. */
    static final int BASE_MAX = 240;
    private static final char[] BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".toCharArray();

    private ChainNames() {}

    public static String service(ServicePortName n) { return "service-" + hashAndTruncate(n.chainBase()); }
    public static String local(ServicePortName n) { return "local-" + hashAndTruncate(n.chainBase()); }
    public static String external(ServicePortName n) { return "external-" + hashAndTruncate(n.chainBase()); }
    public static String firewall(ServicePortName n) { return "firewall-" + hashAndTruncate(n.chainBase()); }
    public static String endpoint(ServicePortName n, Endpoint e) { return "endpoint-" + hashAndTruncate(endpointBase(n, e)); }
    public static String affinity(ServicePortName n, Endpoint e) { return "affinity-" + hashAndTruncate(endpointBase(n, e)); }

    private static final List<String> PORT_CHAIN_PREFIXES = List.of("service-", "local-", "external-", "firewall-");

    /**
     * The service port a {@code service-}, {@code local-}, {@code external-} or {@code firewall-} chain belongs to,
     * read back from its name (never cut: a port's base is at most 196 bytes); empty for any other name, or one whose
     * hash does not match its base.
     */
    public static Optional<ServicePortName> servicePortOf(String chain) {
        for (String prefix : PORT_CHAIN_PREFIXES) {
            if (!chain.startsWith(prefix) || chain.length() < prefix.length() + 10 || chain.charAt(prefix.length() + 8) != '-') continue;
            String base = chain.substring(prefix.length() + 9);
            String[] parts = base.split("/", -1);
            if (parts.length != 4 || !hash(base).equals(chain.substring(prefix.length(), prefix.length() + 8))) return Optional.empty();
            try {
                return Optional.of(new ServicePortName(parts[0], parts[1], parts[3],
                        Protocol.fromApi(parts[2].toUpperCase(Locale.ROOT))));
            } catch (RuntimeException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** {@code ns/svc/proto/port__ip/port}, with IPv6 colons turned into dots (colons are not allowed in names). */
    public static String endpointBase(ServicePortName n, Endpoint e) {
        String ip = e.ip().toString();
        if (e.ip().family() == IpFamily.IPV6) ip = ip.replace(':', '.');
        return n.chainBase() + "__" + ip + "/" + e.port();
    }

    /**
     * The 8-character hash of a base string: RFC 4648 base32 (upper case) of its SHA-256, of which the 8 characters
     * kept are exactly the first 5 bytes.
     */
    public static String hash(String base) {
        byte[] digest = SHA256.get().digest(base.getBytes(StandardCharsets.UTF_8));
        long bits = 0;
        for (int i = 0; i < 5; i++) bits = bits << 8 | (digest[i] & 0xff);
        char[] out = new char[8];
        for (int i = 0; i < 8; i++) out[i] = BASE32[(int) (bits >>> (35 - 5 * i)) & 31];
        return new String(out);
    }

    static String hashAndTruncate(String base) {
        String name = hash(base) + "-" + base;
        byte[] b = name.getBytes(StandardCharsets.UTF_8);
        if (b.length > BASE_MAX) {
            name = new String(b, 0, BASE_MAX - 3, StandardCharsets.UTF_8) + "...";
        }
        return name;
    }

    // getInstance does a provider lookup per call; one digest per thread is reused (digest() resets it).
    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JRE", e);
        }
    });
}
