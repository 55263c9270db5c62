package io.nftproxy.conntrack;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.TestClusters;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ProxyStateBuilder;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * 2,000 UDP entries to one ClusterIP, half of them answered by an endpoint that is gone: the figure for
 * reference/dependencies.md 3 (prototype: dump 65-74 ms, 1,000 pipelined deletes 35 ms). Three rounds, the first on a
 * cold JVM.
 */
class ConntrackCleanerScaleKernelTest {
    private static final int ENTRIES = 2_000;
    private static final int ROUNDS = 3;

    @Test
    void dumpsTwoThousandAndDeletesTheStaleThousand() throws Exception {
        KernelTests.assumeAvailable("conntrack");
        ProxyState v4 = ProxyStateBuilder.build(ConntrackCleanerKernelTest.cluster_(), IpFamily.IPV4, TestClusters.NODE);
        // One conntrack process reading ENTRIES "-I" lines (conntrack -R), not 2,000 processes on a shared machine.
        StringBuilder batch = new StringBuilder();
        for (int i = 0; i < ENTRIES; i++) {
            int sport = 20_000 + i;
            String reply = i % 2 == 0 ? "10.0.1.1" : "10.0.9." + (1 + i % 200);
            batch.append("-I -p udp -s 10.0.5.5 -d 172.30.0.10 --sport ").append(sport).append(" --dport 53 -r ")
                    .append(reply).append(" -q 10.0.5.5 --reply-port-src 5353 --reply-port-dst ").append(sport)
                    .append(" -t 300\n");
        }
        try (KernelNamespace ns = KernelNamespace.create("ctscale")) {
            for (int round = 1; round <= ROUNDS; round++) {
                ns.execChecked("conntrack", "-F");
                ns.execCheckedWithInput(batch.toString(), "conntrack", "-R", "-");
                assertEquals(String.valueOf(ENTRIES), ns.execChecked("conntrack", "-C").strip(), "entries inserted");

                CleanupReport r = ns.handle().call(() -> new ConntrackCleaner().clean(v4, null));
                CleanupReport.Family f = r.families().get(0);
                System.out.printf("conntrack scale round %d: listed %d, stale %d, deleted %d, errors %d; dump %.1f ms, "
                                + "delete %.1f ms, total %.1f ms%n", round, f.listed(), f.stale(), f.deleted(), f.errors(),
                        f.dumpTime().toNanos() / 1e6, f.deleteTime().toNanos() / 1e6, f.duration().toNanos() / 1e6);
                assertEquals(ENTRIES, f.listed());
                assertEquals(ENTRIES / 2, f.stale());
                assertEquals(ENTRIES / 2, f.deleted(), r.toString());
                assertEquals(0, f.errors(), f.errorSamples().toString());
                assertEquals(String.valueOf(ENTRIES / 2), ns.execChecked("conntrack", "-C").strip(), "entries left");
                // Generous bound for a shared 2-core machine; the printed figures are what the report quotes.
                assertTrue(f.duration().toMillis() < 2_000, "cleanup took " + f.duration().toMillis() + " ms");
            }
        }
    }
}
