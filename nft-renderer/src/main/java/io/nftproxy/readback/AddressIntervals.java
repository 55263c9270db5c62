package io.nftproxy.readback;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Address sets as the kernel keeps them. An anonymous interval set ({@code ip saddr != { a, b }}) is stored as
 * sorted, merged intervals: nft 1.0.6 lists {@code { 10.0.0.0/24, 10.0.1.0/24 }} as {@code 10.0.0.0/23},
 * {@code { 192.0.2.0/24, 192.0.2.10 }} as {@code 192.0.2.0/24}, three adjacent /24s as a range, and a
 * one-element set as a bare prefix. {@link #canonical} gives the form both sides of a comparison can agree on.
 */
final class AddressIntervals {
    private AddressIntervals() {}

    /** The smallest sorted list of CIDR prefixes covering exactly the union of the given prefixes. */
    static List<IpPrefix> canonical(List<IpPrefix> prefixes) {
        if (prefixes.isEmpty()) return List.of();
        List<IpPrefix> sorted = new ArrayList<>(prefixes);
        sorted.sort(Comparator.naturalOrder());
        List<IpPrefix> out = new ArrayList<>();
        IpFamily fam = null;
        BigInteger lo = null, hi = null;
        for (IpPrefix p : sorted) {
            BigInteger a = value(p.address()), b = last(p);
            if (lo != null && p.family() == fam && a.compareTo(hi.add(BigInteger.ONE)) <= 0) {
                if (b.compareTo(hi) > 0) hi = b;
                continue;
            }
            if (lo != null) out.addAll(toPrefixes(fam, lo, hi));
            fam = p.family();
            lo = a;
            hi = b;
        }
        out.addAll(toPrefixes(fam, lo, hi));
        return List.copyOf(out);
    }

    /** The CIDR prefixes that exactly cover {@code first..last} (inclusive), in order. */
    static List<IpPrefix> range(IpAddress first, IpAddress last) {
        if (first.family() != last.family()) throw new IllegalArgumentException("range mixes families: " + first + "-" + last);
        BigInteger lo = value(first), hi = value(last);
        if (lo.compareTo(hi) > 0) throw new IllegalArgumentException("empty range " + first + "-" + last);
        return toPrefixes(first.family(), lo, hi);
    }

    private static List<IpPrefix> toPrefixes(IpFamily fam, BigInteger lo, BigInteger hi) {
        List<IpPrefix> out = new ArrayList<>();
        int bits = fam.bits();
        while (lo.compareTo(hi) <= 0) {
            // The largest block that starts at lo (alignment) and does not pass hi.
            int size = lo.signum() == 0 ? bits : Math.min(bits, lo.getLowestSetBit());
            while (size > 0 && lo.add(BigInteger.ONE.shiftLeft(size)).subtract(BigInteger.ONE).compareTo(hi) > 0) size--;
            out.add(new IpPrefix(address(fam, lo), bits - size));
            lo = lo.add(BigInteger.ONE.shiftLeft(size));
        }
        return out;
    }

    private static BigInteger last(IpPrefix p) {
        int hostBits = p.family().bits() - p.length();
        return value(p.address()).add(BigInteger.ONE.shiftLeft(hostBits)).subtract(BigInteger.ONE);
    }

    private static BigInteger value(IpAddress a) { return new BigInteger(1, a.bytes()); }

    private static IpAddress address(IpFamily fam, BigInteger v) {
        byte[] raw = v.toByteArray();
        byte[] out = new byte[fam.bits() / 8];
        int n = Math.min(raw.length, out.length);
        System.arraycopy(raw, raw.length - n, out, out.length - n, n);
        return IpAddress.of(out);
    }
}
