package io.nftproxy.net;

/** A CIDR prefix, canonicalised: host bits cleared, the address re-serialised by {@link IpAddress}. */
public record IpPrefix(IpAddress address, int length) implements Comparable<IpPrefix> {

    public IpPrefix {
        int max = address.family().bits();
        if (length < 0 || length > max) {
            throw new InvalidInputException("prefix", address + "/" + length, "a prefix length 0.." + max);
        }
        address = mask(address, length);
    }

    /** Parses {@code a.b.c.d/n}, {@code v6/n}, or a bare address (a host prefix). Surrounding spaces are trimmed. */
    public static IpPrefix parse(String s) {
        if (s == null) throw new InvalidInputException("cidr", null, "a CIDR such as 10.0.0.0/8");
        String t = s.strip();
        int slash = t.indexOf('/');
        if (slash < 0) return host(IpAddress.parse(t));
        IpAddress a;
        int len;
        try {
            a = IpAddress.parse(t.substring(0, slash));
            String ls = t.substring(slash + 1);
            if (ls.isEmpty() || ls.length() > 3 || !ls.chars().allMatch(Character::isDigit)) throw new NumberFormatException();
            len = Integer.parseInt(ls);
        } catch (InvalidInputException | NumberFormatException e) {
            throw new InvalidInputException("cidr", s, "a CIDR such as 10.0.0.0/8");
        }
        if (len > a.family().bits()) throw new InvalidInputException("cidr", s, "a prefix length 0.." + a.family().bits());
        return new IpPrefix(a, len);
    }

    public static IpPrefix host(IpAddress a) { return new IpPrefix(a, a.family().bits()); }

    public IpFamily family() { return address.family(); }

    public boolean isHost() { return length == address.family().bits(); }

    public boolean contains(IpAddress a) {
        return a.family() == family() && mask(a, length).equals(address);
    }

    public boolean isMatchAll() { return length == 0; }

    /** nft spelling: a bare address for a host prefix, otherwise {@code addr/len}. */
    @Override public String toString() { return isHost() ? address.toString() : address + "/" + length; }

    @Override public int compareTo(IpPrefix o) {
        int c = address.compareTo(o.address);
        return c != 0 ? c : Integer.compare(length, o.length);
    }

    private static IpAddress mask(IpAddress a, int len) {
        byte[] b = a.bytes();
        for (int i = 0; i < b.length; i++) {
            int keep = Math.max(0, Math.min(8, len - 8 * i));
            b[i] &= (byte) (0xff << (8 - keep));
        }
        return IpAddress.of(b);
    }
}
