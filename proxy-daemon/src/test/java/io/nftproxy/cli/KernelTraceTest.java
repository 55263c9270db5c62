package io.nftproxy.cli;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;
import io.nftproxy.nft.Chain;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Field;
import io.nftproxy.nft.Match;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Statement;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Value;
import io.nftproxy.service.NodeContext;
import io.nftproxy.trace.Origin;
import io.nftproxy.trace.Packet;
import io.nftproxy.trace.PacketTracer;
import io.nftproxy.trace.Trace;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code trace --kernel}'s list of differences, on hand-built tables. */
class KernelTraceTest {
    private static final IpAddress SVC = IpAddress.parse("172.30.0.41");
    private static final String MAP = "flat-endpoints-tcp-2";

    /**
     * A flat table's ClusterIP: the kernel lost the element of slot 1. The difference is in a data map the packet's
     * DNAT reads, not in a chain, and is listed before one in a set no rule on the path reads.
     */
    @Test
    void aDifferenceInADataMapTheDnatReadsIsOnThePath() {
        TableContent implied = table(true, false);
        TableContent kernel = table(false, true);
        NodeContext node = new NodeContext("node-a", "zone-a", List.of(IpAddress.parse("192.168.10.20")),
                List.of(IpPrefix.parse("10.0.0.0/8")), List.of(IpPrefix.parse("192.168.10.0/24")),
                List.of(IpAddress.parse("192.168.10.20"), IpAddress.parse("127.0.0.1")), false, NodeContext.DEFAULT_MASQUERADE_BIT, true);
        Packet p = Packet.of(Origin.POD, "10.0.1.50", SVC.toString(), Protocol.TCP, 80);
        Trace want = PacketTracer.trace(implied, node, p);
        Trace have = PacketTracer.trace(kernel, node, p);
        StringWriter sw = new StringWriter();
        KernelTrace.differences(implied, kernel, want, have, new PrintWriter(sw, true));
        List<String> lines = sw.toString().lines().toList();
        assertEquals("differences, expected (the cluster) vs. actual (the kernel), 1 on the packet's path first, 2 in all:",
                lines.get(0), sw.toString());
        assertTrue(lines.get(1).contains(MAP) && lines.get(1).contains("172.30.0.41 . 80 . 1"), sw.toString());
        assertTrue(lines.get(2).contains("aaa-unrelated"), sw.toString());
    }

    private static TableContent table(boolean slot1, boolean unrelated) {
        TableContent.Builder b = TableContent.builder(IpFamily.IPV4)
                .set(new NftSet("aaa-unrelated", List.of("ipv4_addr"), null, List.of(), 0, null))
                .set(new NftSet("flat-ips-tcp-2", List.of("ipv4_addr", "inet_service"), null, List.of(), 0, null))
                .set(NftSet.typeofMap(MAP, new NftSet.Typeof(List.of(Field.DADDR, Field.TCP_DPORT), 2,
                        List.of(Field.DADDR, Field.TCP_DPORT)), "ipv4_addr", null))
                .chain(new Chain("nat-prerouting", new Chain.Hook("nat", "prerouting", -100), null))
                .chain(Chain.regular("services"))
                .rule(new Rule("nat-prerouting", List.of(), List.of(new Statement.Decide(new io.nftproxy.nft.Verdict.Jump("services"))), null))
                .rule(new Rule("services", List.of(new Match.SetLookup(List.of(Field.DADDR, Field.TCP_DPORT), "flat-ips-tcp-2", false)),
                        List.of(new Statement.DnatMap(List.of(Field.DADDR, Field.TCP_DPORT), 2, MAP)), null))
                .element(new Element("flat-ips-tcp-2", List.of(new Value.Addr(SVC), new Value.Port(80)), null, null));
        for (int i = 0; i < (slot1 ? 2 : 1); i++) {
            b.element(Element.data(MAP, List.of(new Value.Addr(SVC), new Value.Port(80), new Value.Index(i)),
                    new Statement.Target(IpAddress.parse("10.180.0." + (i + 1)), 8080)));
        }
        if (unrelated) b.element(new Element("aaa-unrelated", List.of(new Value.Addr(IpAddress.parse("10.9.9.9"))), null, null));
        return b.build();
    }
}
