package io.nftproxy.net;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;

class IpAddressTest {
    /** The log, the bind errors, /configz and --write-config-to spell an address the same way. */
    @Test
    void hostPortShortensIpv6AndBracketsIt() {
        assertEquals("0.0.0.0:10256", IpAddress.hostPort(new InetSocketAddress("0.0.0.0", 10256)));
        assertEquals("[::]:10256", IpAddress.hostPort(new InetSocketAddress("::", 10256)));
        assertEquals("[fd00::1]:10249", IpAddress.hostPort(new InetSocketAddress("fd00:0:0:0:0:0:0:1", 10249)));
        assertEquals("node.invalid:80", IpAddress.hostPort(InetSocketAddress.createUnresolved("node.invalid", 80)));
    }
}
