package io.nftproxy.sync;

import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.monitor.TableChange;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertTrue;

class TamperResponseTest {
    /** An overflow is our own big sync, typically: its log line blames nobody (ProxyDaemonTest checks the repair). */
    @Test
    void aMonitorOverflowIsLoggedWithoutBlamingAnotherWriter() {
        TableChange overflow = new TableChange(TableChange.Origin.OVERFLOW, Set.of(IpFamily.IPV4, IpFamily.IPV6), Set.of(), 0, -1, 0, "",
                "notifications dropped: netlink socket overrun (ENOBUFS)", System.nanoTime());
        String line = TamperResponse.lostTrack(overflow);
        assertTrue(line.startsWith("nftables monitor overflowed, resyncing by read-back") && !line.contains("someone else"), line);
    }
}
