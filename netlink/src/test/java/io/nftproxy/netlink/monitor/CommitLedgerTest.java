package io.nftproxy.netlink.monitor;

import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CommitLedgerTest {
    private static final Set<IpFamily> NONE = Set.of();

    @Test
    void vouchesOnlyForCommitsAfterTheFirstOneSeen() {
        CommitLedger l = new CommitLedger();
        assertFalse(l.untouchedBetween(IpFamily.IPV4, 5, 5), "nothing seen yet");
        l.committed(5, NONE);   // may have been seen in part: the run starts after it
        l.committed(6, NONE);
        l.committed(7, NONE);
        assertTrue(l.untouchedBetween(IpFamily.IPV4, 5, 7));
        assertTrue(l.untouchedBetween(IpFamily.IPV4, 6, 7));
        assertFalse(l.untouchedBetween(IpFamily.IPV4, 4, 7), "commit 5 was the first seen, perhaps not whole");
    }

    @Test
    void aCommitTouchingTheFamilyEndsTheProofForThatFamilyOnly() {
        CommitLedger l = new CommitLedger();
        l.committed(1, NONE);
        l.committed(2, Set.of(IpFamily.IPV6));
        l.committed(3, NONE);
        assertFalse(l.untouchedBetween(IpFamily.IPV6, 1, 3));
        assertTrue(l.untouchedBetween(IpFamily.IPV6, 2, 3), "from the touching commit on (ours, trusted) it holds again");
        assertTrue(l.untouchedBetween(IpFamily.IPV4, 1, 3));
    }

    @Test
    void aGenerationNotYetReadIsNotVouchedFor() {
        CommitLedger l = new CommitLedger();
        l.committed(1, NONE);
        l.committed(2, NONE);
        assertFalse(l.untouchedBetween(IpFamily.IPV4, 1, 3), "the monitor has not read commit 3 yet");
        assertFalse(l.untouchedBetween(IpFamily.IPV4, 2, 1), "backwards");
    }

    @Test
    void aGapOrALossStartsTheRunAgain() {
        CommitLedger l = new CommitLedger();
        l.committed(1, NONE);
        l.committed(2, NONE);
        l.committed(4, NONE);   // 3 never seen
        assertFalse(l.untouchedBetween(IpFamily.IPV4, 2, 4));
        l.committed(5, NONE);
        assertTrue(l.untouchedBetween(IpFamily.IPV4, 4, 5));

        l.lost();
        assertFalse(l.untouchedBetween(IpFamily.IPV4, 4, 5));
        l.committed(6, NONE);
        l.committed(7, NONE);
        assertFalse(l.untouchedBetween(IpFamily.IPV4, 5, 7), "commit 6 came right after the loss");
        assertTrue(l.untouchedBetween(IpFamily.IPV4, 6, 7));
        l.committed(-1, NONE);  // a NEWGEN without its generation
        assertFalse(l.untouchedBetween(IpFamily.IPV4, 6, 7));
    }

    @Test
    void theCounterWrapsPastZero() {
        CommitLedger l = new CommitLedger();
        l.committed(0xffff_fffeL, NONE);
        l.committed(0xffff_ffffL, NONE);
        l.committed(1, NONE);   // the kernel skips 0
        assertFalse(l.untouchedBetween(IpFamily.IPV4, 0xffff_ffffL, 1), "a wrapped interval is not vouched for");
        l.committed(2, NONE);
        assertTrue(l.untouchedBetween(IpFamily.IPV4, 1, 2), "after the wrap the run goes on");
    }
}
