package io.nftproxy.daemon;

import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A long first sync says where it is on systemd's status line after each part; later syncs say nothing here. */
class FirstSyncProgressTest {
    @Test
    void theStatusLineFollowsEachPartUntilTheFirstSyncIsDone() {
        List<String> status = new ArrayList<>();
        AtomicLong now = new AtomicLong();
        FirstSyncProgress p = new FirstSyncProgress(status::add, now::get);
        p.starting(45000, 45000);
        p.partCommitted(IpFamily.IPV4, 1, 3, 5000, 12000);
        now.addAndGet(FirstSyncProgress.LOG_EVERY_NANOS);
        p.partCommitted(IpFamily.IPV4, 2, 3, 10000, 12000);
        p.partCommitted(IpFamily.IPV4, 3, 3, 12000, 12000);
        assertEquals(List.of("first sync: rendering and applying 45000 services, 45000 EndpointSlices",
                "first sync: table ip kube-proxy part 1 of 3 committed (5000 of 12000 commands)",
                "first sync: table ip kube-proxy part 2 of 3 committed (10000 of 12000 commands)",
                "first sync: table ip kube-proxy part 3 of 3 committed (12000 of 12000 commands)"), status);
        p.finished();
        status.clear();
        p.partCommitted(IpFamily.IPV6, 1, 2, 5000, 6000);
        p.starting(1, 1);
        assertEquals(List.of(), status, "after the first sync the status line is READY's");
    }
}
