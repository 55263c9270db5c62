package io.nftproxy.netlink.rt;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import org.junit.jupiter.api.Test;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AddressMonitorTest {
    @Test
    void reportsAddressesAddedAndRemovedInItsNamespaceOnly() throws Exception {
        KernelTests.assumeAvailable();
        try (KernelNamespace ns = KernelNamespace.create("nl"); KernelNamespace other = KernelNamespace.create("nl")) {
            ns.ip("link", "add", "d0", "type", "veth", "peer", "name", "d1");
            other.ip("link", "add", "e0", "type", "veth", "peer", "name", "e1");
            Semaphore changes = new Semaphore(0);
            try (AddressMonitor m = AddressMonitor.start(ns.handle(), changes::release, e -> { throw new AssertionError(e); })) {
                long t0 = System.nanoTime();
                ns.ip("addr", "add", "192.0.2.1/24", "dev", "d0");
                assertTrue(changes.tryAcquire(1, TimeUnit.SECONDS), "an added IPv4 address is reported");
                System.out.printf("address monitor: added address reported after %d ms%n", (System.nanoTime() - t0) / 1_000_000);
                changes.drainPermits();
                ns.ip("addr", "add", "2001:db8::1/64", "dev", "d0", "nodad");
                assertTrue(changes.tryAcquire(1, TimeUnit.SECONDS), "an added IPv6 address is reported");
                changes.drainPermits();
                ns.ip("addr", "del", "192.0.2.1/24", "dev", "d0");
                assertTrue(changes.tryAcquire(1, TimeUnit.SECONDS), "a removed address is reported");
                changes.drainPermits();
                other.ip("addr", "add", "198.51.100.1/24", "dev", "e0");
                ns.ip("link", "set", "d0", "mtu", "1400");
                assertFalse(changes.tryAcquire(300, TimeUnit.MILLISECONDS), "another namespace and a link change are not address changes");
            }
        }
    }
}
