package io.nftproxy.config;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** nodePortAddresses parsed once, from the flag or the file, and resolved per sync without parsing again. */
class NodePortAddressesTest {
    private static final List<IpAddress> NODE = List.of(IpAddress.parse("192.168.10.20"), IpAddress.parse("192.168.10.21"),
            IpAddress.parse("fd00:10::20"));

    @Test
    void primaryIsEachFamilysFirstNodeIp() {
        assertEquals(NodePortAddresses.PRIMARY_IPS, NodePortAddresses.parse("f", "--f", List.of("primary")));
        assertEquals(NodePortAddresses.PRIMARY_IPS, NodePortAddresses.parse("f", "--f", List.of()), "none is kube-proxy's primary");
        assertEquals(List.of(IpPrefix.parse("192.168.10.20/32"), IpPrefix.parse("fd00:10::20/128")), NodePortAddresses.PRIMARY_IPS.resolve(NODE));
        assertEquals(List.of(), NodePortAddresses.PRIMARY_IPS.resolve(List.of()));
    }

    @Test
    void cidrsAreTheCidrsAndReadBackAsGiven() {
        NodePortAddresses n = NodePortAddresses.parse("f", "--f", List.of("10.0.0.0/8", "::/0"));
        assertFalse(n.primary());
        assertEquals(List.of(IpPrefix.parse("10.0.0.0/8"), IpPrefix.parse("::/0")), n.resolve(NODE));
        assertEquals(List.of("10.0.0.0/8", "::/0"), n.values());
        assertEquals("10.0.0.0/8,::/0", n.toString());
    }

    /** Syntax here, naming the field and the flag; "primary" with CIDRs is a rule, validate's. */
    @Test
    void neitherPrimaryNorACidrIsRefusedAndPrimaryWithCidrsIsValidatesRule() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> NodePortAddresses.parse("nodePortAddresses", "--nodeport-addresses", List.of("10.0.0.0/8", "eth0")));
        assertEquals("nodePortAddresses (--nodeport-addresses): invalid value \"eth0\"; allowed: 'primary' or CIDRs such as 192.168.10.0/24",
                e.getMessage());
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = "n1";
        b.nodePortAddresses = NodePortAddresses.parse("nodePortAddresses", "--nodeport-addresses", List.of("primary", "10.0.0.0/8"));
        assertEquals("nodePortAddresses (--nodeport-addresses): invalid value \"primary,10.0.0.0/8\"; allowed: 'primary' alone, or CIDRs",
                assertThrows(ConfigException.class, b::validate).getMessage());
    }
}
