package io.nftproxy;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.nftproxy.TestAddresses.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The test address plan keeps to private and documentation ranges, and each address sits where the plan says. */
class TestAddressesTest {
    /** RFC 1918, ULA, RFC 5737's three documentation networks, RFC 3849's. */
    private static final List<IpPrefix> ALLOWED = List.of(cidr("10.0.0.0/8"), cidr("172.16.0.0/12"), cidr("192.168.0.0/16"),
            cidr("fd00::/8"), cidr("192.0.2.0/24"), cidr("198.51.100.0/24"), cidr("203.0.113.0/24"), cidr("2001:db8::/32"));

    @Test
    void everyAddressAndRangeIsPrivateOrForDocumentation() throws IllegalAccessException {
        List<String> outside = new ArrayList<>();
        for (Field f : TestAddresses.class.getFields()) {
            if (!Modifier.isStatic(f.getModifiers()) || f.getType() != String.class) continue;
            String v = (String) f.get(null);
            if (!v.matches("[0-9a-f.:]+(/[0-9]+)?") || !(v.contains(".") || v.contains(":"))) continue;
            IpAddress a = v.contains("/") ? cidr(v).address() : ip(v);
            if (ALLOWED.stream().noneMatch(p -> p.family() == a.family() && p.contains(a))) outside.add(f.getName() + " " + v);
        }
        assertEquals(List.of(), outside);
    }

    @Test
    void eachAddressLiesInItsRange() {
        Map<String, String> in = Map.ofEntries(
                Map.entry(LAN_GATEWAY, LAN_CIDR), Map.entry(NODE_IP, LAN_CIDR), Map.entry(OTHER_NODE_IP, LAN_CIDR),
                Map.entry(POD_CIDR, CLUSTER_CIDR), Map.entry(OTHER_POD_CIDR, CLUSTER_CIDR),
                Map.entry(NODE_POD_GATEWAY, POD_CIDR), Map.entry(POD_A, POD_CIDR), Map.entry(POD_B, POD_CIDR),
                Map.entry(POD_CLIENT, POD_CIDR), Map.entry(OTHER_NODE_POD_GATEWAY, OTHER_POD_CIDR), Map.entry(OTHER_POD, OTHER_POD_CIDR),
                Map.entry(LB_VIP, LB_VIP_CIDR), Map.entry(EXTERNAL_IP, EXTERNAL_IP_CIDR),
                Map.entry(EXTERNAL_CLIENT, ALLOWED_SOURCE_RANGE), Map.entry(ALLOWED_SOURCE_RANGE, EXTERNAL_CIDR),
                Map.entry(DENIED_CLIENT, EXTERNAL_CIDR),
                Map.entry(LAN6_GATEWAY, LAN6_CIDR), Map.entry(NODE_IP6, LAN6_CIDR), Map.entry(OTHER_NODE_IP6, LAN6_CIDR),
                Map.entry(POD_CIDR6, CLUSTER_CIDR6), Map.entry(OTHER_POD_CIDR6, CLUSTER_CIDR6),
                Map.entry(NODE_POD_GATEWAY6, POD_CIDR6), Map.entry(POD_A6, POD_CIDR6), Map.entry(POD_B6, POD_CIDR6),
                Map.entry(POD_CLIENT6, POD_CIDR6), Map.entry(OTHER_NODE_POD_GATEWAY6, OTHER_POD_CIDR6),
                Map.entry(OTHER_POD6, OTHER_POD_CIDR6), Map.entry(EXTERNAL_CLIENT6, EXTERNAL_CIDR6));
        List<String> wrong = new ArrayList<>();
        in.forEach((a, range) -> {
            IpAddress addr = a.contains("/") ? cidr(a).address() : ip(a);
            if (!cidr(range).contains(addr)) wrong.add(a + " not in " + range);
        });
        assertEquals(List.of(), wrong);
        for (String a : List.of(DENIED_CLIENT)) assertEquals(false, cidr(ALLOWED_SOURCE_RANGE).contains(ip(a)), a);
        for (String r : List.of(SERVICE_CIDR, LB_VIP_CIDR, EXTERNAL_IP_CIDR, EXTERNAL_CIDR, LAN_CIDR)) {
            assertEquals(false, cidr(CLUSTER_CIDR).contains(cidr(r).address()), r + " overlaps the cluster CIDR");
        }
    }
}
