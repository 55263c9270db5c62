package io.nftproxy.netlink.rt;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AddressDumpTest {
    @Test
    void parsesADatagramWithAddressDoneAndForeignMessages() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(256).order(ByteOrder.nativeOrder());
        // RTM_NEWADDR, seq 7: 192.0.2.1/24 on ifindex 3, IFA_ADDRESS 192.0.2.9 and IFA_LOCAL 192.0.2.1
        int start = b.position();
        b.putInt(0).putShort((short) AddressDump.RTM_NEWADDR).putShort((short) 2).putInt(7).putInt(0);
        b.put((byte) AddressDump.AF_INET).put((byte) 24).put((byte) 0).put((byte) 0).putInt(3);
        b.putShort((short) 8).putShort((short) AddressDump.IFA_ADDRESS).put(new byte[] {(byte) 192, 0, 2, 9});
        b.putShort((short) 8).putShort((short) AddressDump.IFA_LOCAL).put(new byte[] {(byte) 192, 0, 2, 1});
        b.putInt(start, b.position() - start);
        // a message of another request (seq 8) is skipped
        start = b.position();
        b.putInt(0).putShort((short) AddressDump.RTM_NEWADDR).putShort((short) 2).putInt(8).putInt(0);
        b.put((byte) AddressDump.AF_INET).put((byte) 8).put((byte) 0).put((byte) 254).putInt(1);
        b.putShort((short) 8).putShort((short) AddressDump.IFA_LOCAL).put(new byte[] {127, 0, 0, 1});
        b.putInt(start, b.position() - start);
        b.putInt(20).putShort((short) NetlinkDump.NLMSG_DONE).putShort((short) 2).putInt(7).putInt(0).putInt(0);
        b.flip();

        List<InterfaceAddress> out = new ArrayList<>();
        assertTrue(AddressDump.parse(b, 7, out));
        assertEquals(List.of(new InterfaceAddress(3, IpFamily.IPV4, IpAddress.parse("192.0.2.1"), 24, 0)), out);
    }

    @Test
    void aNetlinkErrorBecomesAnIOExceptionWithTheErrnoText() {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.nativeOrder());
        b.putInt(36).putShort((short) NetlinkDump.NLMSG_ERROR).putShort((short) 0).putInt(5).putInt(0).putInt(-1)
                .put(new byte[16]).flip();
        Exception e = assertThrows(java.io.IOException.class, () -> AddressDump.parse(b, 5, new ArrayList<>()));
        assertTrue(e.getMessage().contains("errno 1"), e.getMessage());
    }

    @Test
    void matchesIpAddrInAThrowawayNamespace() throws Exception {
        KernelTests.assumeAvailable();
        try (KernelNamespace ns = KernelNamespace.create("nl")) {
            ns.ip("link", "set", "lo", "up");
            addLink(ns);
            ns.ip("addr", "add", "192.0.2.1/24", "dev", "d0");
            ns.ip("addr", "add", "198.51.100.7/32", "dev", "d0");
            ns.ip("addr", "add", "2001:db8::1/64", "dev", "d0", "nodad");

            List<InterfaceAddress> dumped = ns.handle().call(AddressDump::dump);
            Set<String> expected = fromIpJson(ns.ip("-j", "addr"));

            Set<String> got = new HashSet<>();
            for (InterfaceAddress a : dumped) got.add(key(a.ifindex(), a.family(), a.address().toString(), a.prefixLength(), a.scopeName()));
            assertEquals(expected, got, "dump " + dumped);
            assertEquals(dumped.size(), got.size(), "no duplicates");
            assertTrue(got.stream().anyMatch(k -> k.contains("192.0.2.1/24")), got.toString());
            assertTrue(got.stream().anyMatch(k -> k.contains("2001:db8::1/64")), got.toString());

            // The calling thread never left the host namespace: the host has none of the scratch addresses
            // (read-only dump), unless they were already there.
            List<InterfaceAddress> host = AddressDump.dump();
            assertFalse(host.isEmpty());
            assertFalse(host.stream().anyMatch(a -> a.address().toString().equals("198.51.100.7")), host.toString());
        }
    }

    /** A dummy interface {@code d0}; where the dummy module is missing, a veth pair with both ends inside. */
    private static void addLink(KernelNamespace ns) throws Exception {
        try {
            ns.ip("link", "add", "d0", "type", "dummy");
        } catch (java.io.IOException noDummy) {
            ns.ip("link", "add", "d0", "type", "veth", "peer", "name", "d1");
        }
    }

    /** {@code ip -j addr}: [{ifindex, addr_info: [{family: inet|inet6, local, prefixlen, scope}]}]. */
    private static Set<String> fromIpJson(String json) {
        Set<String> out = new HashSet<>();
        for (JsonNode link : JsonMapper.builder().build().readTree(json)) {
            int ifindex = link.get("ifindex").asInt();
            for (JsonNode ai : link.path("addr_info")) {
                IpFamily f = ai.get("family").asString().equals("inet") ? IpFamily.IPV4 : IpFamily.IPV6;
                out.add(key(ifindex, f, IpAddress.parse(ai.get("local").asString()).toString(),
                        ai.get("prefixlen").asInt(), ai.get("scope").asString()));
            }
        }
        return out;
    }

    private static String key(int ifindex, IpFamily f, String addr, int prefix, String scope) {
        return ifindex + " " + f + " " + addr + "/" + prefix + " " + scope;
    }
}
