package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.TableSpec;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Value;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;


/**
 * A 1-element transaction in-process and through {@code nft -f -}, applied alternately as add and delete: every one
 * must take effect (checked by reading the set back every few transactions, outside the timing), and the median
 * latency of each client is printed for the record (benchmarks, not this test, hold the targets).
 */
class ApplyLatencyKernelTest {
    @Test
    void oneElementTransactionLatency() throws Exception {
        KernelTests.assumeAvailable();
        try (KernelNamespace ns = KernelNamespace.create("nl");
             LibNftablesClient lib = LibNftablesClient.inNamespace(ns.handle())) {
            NftSet set = new NftSet("cluster-ips", List.of("ipv4_addr"), null, List.of(), 0, null);
            lib.apply(new Transaction(IpFamily.IPV4).add(new TableSpec(TableContent.TABLE_COMMENT)).add(set));
            ExecNftClient exec = ExecNftClient.inNamespace(ns.handle(), Duration.ofSeconds(30));

            double libMs = medianMillis(lib, 50, 300);
            double execMs = medianMillis(exec, 3, 30);
            System.out.printf("1-element transaction, median: in-process %.3f ms, nft -f - (ip netns exec) %.1f ms, ratio %.0fx%n",
                    libMs, execMs, execMs / libMs);
        }
    }

    /** Alternately adds and deletes one element; returns the median of {@code n} measured applies. */
    private static double medianMillis(NftClient client, int warmup, int n) {
        Element e = new Element("cluster-ips", List.of(new Value.Addr(IpAddress.parse("10.96.0.10"))), null, null);
        Transaction add = new Transaction(IpFamily.IPV4).add(e);
        Transaction del = new Transaction(IpFamily.IPV4).delete(e);
        client.capabilities(); // probed once, outside the measurement
        long[] t = new long[n];
        for (int i = 0; i < warmup + n; i++) {
            Transaction tx = i % 2 == 0 ? add : del;
            long start = System.nanoTime();
            client.apply(tx);
            long took = System.nanoTime() - start;
            if (i >= warmup) t[i - warmup] = took;
            if (i % 7 == 0) {
                boolean present = client.listTableJson(IpFamily.IPV4).contains("10.96.0.10");
                assertEquals(i % 2 == 0, present, client.describe() + ": transaction " + i + " did not take effect");
            }
        }
        if ((warmup + n) % 2 == 1) client.apply(del);
        assertFalse(client.listTableJson(IpFamily.IPV4).contains("10.96.0.10"), client.describe() + ": the last delete");
        Arrays.sort(t);
        return t[n / 2] / 1e6;
    }
}
