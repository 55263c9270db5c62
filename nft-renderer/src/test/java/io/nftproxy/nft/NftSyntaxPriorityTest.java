package io.nftproxy.nft;

import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** nft 1.0.6 refuses {@code priority dstnat} on the output hook (checked against the kernel in integration-tests). */
class NftSyntaxPriorityTest {
    private static final NftSyntax BASELINE = new NftSyntax(IpFamily.IPV4, Capabilities.baseline());
    private static final NftSyntax SYMBOLIC = new NftSyntax(IpFamily.IPV4, new Capabilities("1.1.1", true, true));

    @Test
    void outputNatPrioritiesAreNumericOnTheBaseline() {
        assertEquals("-100", BASELINE.priority(new Chain.Hook("nat", "output", -100)));
        assertEquals("-110", BASELINE.priority(new Chain.Hook("filter", "output", -110)));
        assertEquals("filter", BASELINE.priority(new Chain.Hook("filter", "output", 0)));
        assertEquals("dstnat", BASELINE.priority(new Chain.Hook("nat", "prerouting", -100)));
        assertEquals("dstnat - 10", BASELINE.priority(new Chain.Hook("filter", "prerouting", -110)));
        assertEquals("srcnat", BASELINE.priority(new Chain.Hook("nat", "postrouting", 100)));
    }

    @Test
    void symbolicWhereTheProbeSaysNftAcceptsIt() {
        assertEquals("dstnat", SYMBOLIC.priority(new Chain.Hook("nat", "output", -100)));
        assertEquals("dstnat - 10", SYMBOLIC.priority(new Chain.Hook("filter", "output", -110)));
    }
}
