package io.nftproxy.conntrack;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@link FlowEntry#state()} reads as conntrack -L prints the state column. */
class FlowEntryTest {
    private static FlowEntry flow(int protocol, int tcpState, long status) {
        IpAddress a = IpAddress.parse("10.0.1.50"), b = IpAddress.parse("172.30.0.10");
        return new FlowEntry(IpFamily.IPV4, protocol, a, b, 40000, 80, IpAddress.parse("10.0.1.10"), a, 8080, 40000,
                0, 7, tcpState, status);
    }

    @Test
    void tcpStateThenTheReplyFlags() {
        assertEquals("ESTABLISHED [ASSURED]", flow(FlowEntry.TCP, 3, FlowEntry.SEEN_REPLY | FlowEntry.ASSURED).state());
        assertEquals("SYN_SENT [UNREPLIED]", flow(FlowEntry.TCP, 1, 0).state());
        assertEquals("TIME_WAIT", flow(FlowEntry.TCP, 7, FlowEntry.SEEN_REPLY).state());
        assertEquals("STATE_42 [UNREPLIED]", flow(FlowEntry.TCP, 42, 0).state());
    }

    @Test
    void withoutTcpStateOnlyTheFlags() {
        assertEquals("[UNREPLIED]", flow(FlowEntry.UDP, FlowEntry.NO_TCP_STATE, 0).state());
        assertEquals("[ASSURED]", flow(FlowEntry.UDP, FlowEntry.NO_TCP_STATE, FlowEntry.SEEN_REPLY | FlowEntry.ASSURED).state());
        assertEquals("-", flow(FlowEntry.UDP, FlowEntry.NO_TCP_STATE, FlowEntry.SEEN_REPLY).state());
    }
}
