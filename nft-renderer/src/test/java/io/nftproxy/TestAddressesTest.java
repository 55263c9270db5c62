package io.nftproxy;

import io.nftproxy.net.IpAddress;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.render.GoldenScenarios;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.nftproxy.TestAddresses.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    /**
     * Every endpoint of the scenario catalogue sits in its node's pod range, as a pod's address does. The exceptions
     * are deliberate: an address nobody can parse (the invalid-input scenario), the API server's endpoint (the node's
     * LAN, no node name), ipv6-only's long ULA address, whose compressed text is re-serialised in the chain name, and
     * the pod of duplicate-endpoint-two-slices, which is moving: a stale slice still reports it on the other node.
     */
    @Test
    void everyScenarioEndpointLiesInItsNodesPodRange() {
        Map<String, List<String>> podRanges = Map.of(NODE, List.of(POD_CIDR, POD_CIDR6), OTHER_NODE, List.of(OTHER_POD_CIDR, OTHER_POD_CIDR6));
        List<String> deliberate = List.of("10.0.1.999", "192.168.10.17", "fd80:abcd:12::a1b2:c3d4:e5f6:9999");
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (GoldenScenarios.Scenario s : Stream.concat(GoldenScenarios.all().stream(), GoldenScenarios.kernelForms().stream()).toList()) {
            for (EndpointSliceObject slice : s.snapshot().endpointSlices()) {
                for (EndpointSliceObject.Endpoint e : slice.endpoints()) {
                    for (String a : e.addresses()) {
                        if (deliberate.contains(a)) continue;
                        List<String> ranges = podRanges.get(e.nodeName());
                        IpAddress addr;
                        try {
                            addr = ip(a);
                        } catch (InvalidInputException ex) {
                            continue;
                        }
                        checked++;
                        if (ranges == null || ranges.stream().noneMatch(r -> cidr(r).family() == addr.family() && cidr(r).contains(addr))) {
                            wrong.add(s.name() + ": " + a + " on " + e.nodeName());
                        }
                    }
                }
            }
        }
        assertEquals(List.of("duplicate-endpoint-two-slices: 10.0.1.101 on node-b"), wrong);
        assertTrue(checked >= 80, "endpoints checked: " + checked);
    }
}
