package io.nftproxy.readback;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class AddressIntervalsTest {
    @Test
    void mergesAsTheKernelDoes() {
        assertEquals(p("10.0.0.0/23"), AddressIntervals.canonical(p("10.0.1.0/24", "10.0.0.0/24")));
        assertEquals(p("192.0.2.0/24"), AddressIntervals.canonical(p("192.0.2.0/24", "192.0.2.10")));
        assertEquals(p("10.0.0.0/8"), AddressIntervals.canonical(p("10.1.0.0/16", "10.0.0.0/8")));
        assertEquals(p("10.0.0.0/23", "10.0.2.0/24"), AddressIntervals.canonical(p("10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24")));
        assertEquals(p("0.0.0.0/0"), AddressIntervals.canonical(p("0.0.0.0/0", "10.0.0.1")));
        assertEquals(p("2001:db8::/63"), AddressIntervals.canonical(p("2001:db8::/64", "2001:db8:0:1::/64", "2001:db8::5")));
        assertEquals(p("1.2.3.4", "1.2.3.6"), AddressIntervals.canonical(p("1.2.3.6", "1.2.3.4")));
        assertEquals(List.of(), AddressIntervals.canonical(List.of()));
    }

    @Test
    void splitsRangesIntoPrefixes() {
        assertEquals(p("10.0.0.0/23", "10.0.2.0/24"), AddressIntervals.range(a("10.0.0.0"), a("10.0.2.255")));
        assertEquals(p("10.0.0.1", "10.0.0.2/31", "10.0.0.4"), AddressIntervals.range(a("10.0.0.1"), a("10.0.0.4")));
        assertEquals(p("0.0.0.0/0"), AddressIntervals.range(a("0.0.0.0"), a("255.255.255.255")));
        assertEquals(p("::/0"), AddressIntervals.range(a("::"), a("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")));
        assertEquals(p("fd00::1"), AddressIntervals.range(a("fd00::1"), a("fd00::1")));
    }

    private static IpAddress a(String s) { return IpAddress.parse(s); }

    private static List<IpPrefix> p(String... s) { return Arrays.stream(s).map(IpPrefix::parse).toList(); }
}
