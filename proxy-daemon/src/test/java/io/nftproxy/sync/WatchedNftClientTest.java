package io.nftproxy.sync;

import io.nftproxy.netlink.nft.FakeNftClient;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.nft.Capabilities;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WatchedNftClientTest {
    /** An nft whose probe answers only when released. */
    private static final class HangingProbe implements NftClient {
        final CountDownLatch entered = new CountDownLatch(1), release = new CountDownLatch(1);

        @Override public void apply(io.nftproxy.nft.Transaction tx) {}
        @Override public String listTableJson(io.nftproxy.net.IpFamily family) { return null; }
        @Override public Capabilities capabilities() {
            entered.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Capabilities.baseline();
        }
        @Override public String describe() { return "hanging nft"; }
    }

    @Test
    void aCallPastFiveSecondsIsReportedOnceAndNamedWhileItLasts() throws Exception {
        AtomicLong now = new AtomicLong();
        HangingProbe nft = new HangingProbe();
        WatchedNftClient watched = new WatchedNftClient(nft, now::get);
        Thread caller = new Thread(watched::capabilities);
        caller.start();
        assertTrue(nft.entered.await(5, TimeUnit.SECONDS));
        now.set(4_900_000_000L);
        assertNull(watched.overdue(), "not yet slow");
        assertNull(watched.waiting());
        now.set(6_200_000_000L);
        assertEquals("waiting for nft to answer the capabilities probe since 6s (hanging nft); still waiting, up to the nft timeout",
                watched.overdue());
        assertNull(watched.overdue(), "once per call");
        now.set(12_000_000_000L);
        assertEquals("waiting for nft to answer the capabilities probe since 12s (hanging nft)", watched.waiting());
        nft.release.countDown();
        caller.join(5000);
        assertNull(watched.waiting(), "answered");
        assertNull(watched.overdue());
    }

    @Test
    void quickCallsAreNeverReported() {
        AtomicLong now = new AtomicLong();
        FakeNftClient fake = new FakeNftClient();
        WatchedNftClient watched = new WatchedNftClient(fake, () -> now.addAndGet(1_000_000L));
        watched.capabilities();
        watched.listTableJson(io.nftproxy.net.IpFamily.IPV4);
        assertNull(watched.overdue());
        assertNull(watched.waiting());
    }
}
