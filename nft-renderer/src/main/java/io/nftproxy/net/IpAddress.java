package io.nftproxy.net;

import java.net.InetSocketAddress;
import java.util.Arrays;

/**
 * An IP address parsed from text by code, never by the resolver: a hostname can never become an address, and
 * the text that reaches nft is always our canonical re-serialisation (RFC 5952 for IPv6), never the API's string.
 */
public final class IpAddress implements Comparable<IpAddress> {
    private final byte[] bytes;
    private final String text;
    private final int hash;

    private IpAddress(byte[] bytes) {
        this.bytes = bytes;
        this.text = bytes.length == 4 ? formatV4(bytes) : formatV6(bytes);
        this.hash = mix(bytes);
    }

    /**
     * Arrays.hashCode maps neighbouring addresses onto the same value ((b2, b3) and (b2+1, b3-31) collide), which
     * turned the element maps into long tree bins at 10k+ services; the address's own bits, 32 at a time, each
     * through a murmur3 finaliser, never collide for IPv4.
     */
    private static int mix(byte[] b) {
        int h = 0;
        for (int i = 0; i < b.length; i += 4) {
            int word = (b[i] & 0xff) << 24 | (b[i + 1] & 0xff) << 16 | (b[i + 2] & 0xff) << 8 | (b[i + 3] & 0xff);
            h = fmix(h * 0x9e3779b1 + word);
        }
        return h;
    }

    private static int fmix(int h) {
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        return h;
    }

    public static IpAddress of(byte[] bytes) {
        if (bytes.length != 4 && bytes.length != 16) throw new IllegalArgumentException("address length " + bytes.length);
        return new IpAddress(bytes.clone());
    }

    /**
     * Parses an IPv4 dotted quad (leading zeros tolerated and dropped, as upstream's sloppy parser does) or an
     * IPv6 literal. IPv4-mapped IPv6 forms and zones are refused: they are ambiguous about the family.
     */
    public static IpAddress parse(String s) {
        if (s == null) throw new InvalidInputException("address", null, "an IPv4 or IPv6 literal");
        byte[] b = s.indexOf(':') >= 0 ? parseV6(s) : parseV4(s);
        if (b == null) throw new InvalidInputException("address", s, "an IPv4 or IPv6 literal");
        return new IpAddress(b);
    }

    /** Parses and requires the given family. */
    public static IpAddress parse(String s, IpFamily family) {
        IpAddress a = parse(s);
        if (a.family() != family) {
            throw new InvalidInputException("address", s, "an " + family.apiName() + " address");
        }
        return a;
    }

    public IpFamily family() { return bytes.length == 4 ? IpFamily.IPV4 : IpFamily.IPV6; }

    public byte[] bytes() { return bytes.clone(); }

    int byteAt(int i) { return bytes[i] & 0xff; }

    public boolean isUnspecified() {
        for (byte x : bytes) if (x != 0) return false;
        return true;
    }

    public boolean isLoopback() {
        return family() == IpFamily.IPV4 ? byteAt(0) == 127 : text.equals("::1");
    }

    public boolean isLinkLocal() {
        return family() == IpFamily.IPV4 ? (byteAt(0) == 169 && byteAt(1) == 254)
                : (byteAt(0) == 0xfe && (byteAt(1) & 0xc0) == 0x80);
    }

    public boolean isMulticast() {
        return family() == IpFamily.IPV4 ? (byteAt(0) & 0xf0) == 0xe0 : byteAt(0) == 0xff;
    }

    @Override public String toString() { return text; }

    /** {@code ip:port}, an IPv6 address in brackets: {@code [fd00::1]:80}. */
    public String withPort(int port) { return family() == IpFamily.IPV6 ? "[" + text + "]:" + port : text + ":" + port; }

    /**
     * A socket address as {@link #withPort} spells it ({@code [::]:10256}: IPv6 shortened, in brackets), for the
     * log, bind errors, {@code /configz} and {@code --write-config-to}; an unresolved one keeps its host name.
     */
    public static String hostPort(InetSocketAddress a) {
        if (a.getAddress() == null) return a.getHostString() + ":" + a.getPort();
        return of(a.getAddress().getAddress()).withPort(a.getPort());
    }

    @Override public boolean equals(Object o) {
        return o instanceof IpAddress other && Arrays.equals(bytes, other.bytes);
    }

    @Override public int hashCode() { return hash; }

    @Override public int compareTo(IpAddress o) {
        if (bytes.length != o.bytes.length) return Integer.compare(bytes.length, o.bytes.length);
        return Arrays.compareUnsigned(bytes, o.bytes);
    }

    private static byte[] parseV4(String s) {
        int[] n = numbers(s, "\\.", 10, 3);
        if (n == null || n.length != 4) return null;
        byte[] out = new byte[4];
        for (int i = 0; i < 4; i++) {
            if (n[i] > 255) return null;
            out[i] = (byte) n[i];
        }
        return out;
    }

    private static byte[] parseV6(String s) {
        if (s.length() > 39 || s.length() < 2) return null;
        int dbl = s.indexOf("::");
        if (dbl >= 0 && s.indexOf("::", dbl + 1) >= 0) return null;
        String head = dbl >= 0 ? s.substring(0, dbl) : s;
        String tail = dbl >= 0 ? s.substring(dbl + 2) : "";
        int[] h = groups(head);
        int[] t = groups(tail);
        if (h == null || t == null) return null;
        int total = h.length + t.length;
        if (dbl < 0 ? total != 8 : total > 7) return null;
        byte[] out = new byte[16];
        for (int i = 0; i < h.length; i++) {
            out[2 * i] = (byte) (h[i] >> 8);
            out[2 * i + 1] = (byte) h[i];
        }
        for (int i = 0; i < t.length; i++) {
            int g = 8 - t.length + i;
            out[2 * g] = (byte) (t[i] >> 8);
            out[2 * g + 1] = (byte) t[i];
        }
        return out;
    }

    private static int[] groups(String s) {
        return s.isEmpty() ? new int[0] : numbers(s, ":", 16, 4);
    }

    /** The numbers of {@code s} split at {@code sep}, each 1 to {@code maxDigits} ASCII digits; null if it is not that. */
    private static int[] numbers(String s, String sep, int radix, int maxDigits) {
        String[] parts = s.split(sep, -1);
        int[] out = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            if (p.isEmpty() || p.length() > maxDigits) return null;
            for (int j = 0; j < p.length(); j++) {
                int d = Character.digit(p.charAt(j), radix);
                if (d < 0 || p.charAt(j) > 'f') return null;
                out[i] = out[i] * radix + d;
            }
        }
        return out;
    }

    private static String formatV4(byte[] b) {
        return (b[0] & 0xff) + "." + (b[1] & 0xff) + "." + (b[2] & 0xff) + "." + (b[3] & 0xff);
    }

    /** RFC 5952: lowercase, no leading zeros, the longest run (of two or more) of zero groups as "::". */
    private static String formatV6(byte[] b) {
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) g[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        int bestStart = -1, bestLen = 0;
        for (int i = 0; i < 8; ) {
            if (g[i] != 0) { i++; continue; }
            int j = i;
            while (j < 8 && g[j] == 0) j++;
            if (j - i > bestLen && j - i >= 2) { bestStart = i; bestLen = j - i; }
            i = j;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') sb.append(':');
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }
}
