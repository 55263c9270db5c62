package io.nftproxy.it;

import io.nftproxy.demo.KernelNamespace;
import io.nftproxy.netlink.lock.NetnsLock;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one-writer lock on a real kernel: exclusive within a network namespace, independent across them. */
class NetnsLockKernelTest {
    @BeforeAll
    static void kernelAvailable() {
        String cause = KernelNamespace.unavailabilityCause().orElse(null);
        if (cause != null) System.out.println("SKIPPED NetnsLockKernelTest: " + cause);
        Assumptions.assumeTrue(cause == null, cause);
    }

    @Test
    void oneHolderPerNetworkNamespaceNamedToTheLoser() throws Exception {
        try (KernelNamespace a = KernelNamespace.create("locka"); KernelNamespace b = KernelNamespace.create("lockb")) {
            NetnsLock held = NetnsLock.acquire(a.name());
            try {
                NetnsLock.HeldException e = assertThrows(NetnsLock.HeldException.class, () -> NetnsLock.acquire(a.name()));
                long me = ProcessHandle.current().pid();
                assertEquals(me, e.holderPid(), e.getMessage());
                assertTrue(e.getMessage().contains("pid " + me + " (") && e.getMessage().contains("@nftproxy-lock"), e.getMessage());
                // Asked again and again, the holder still answers: its backlog never fills.
                for (int i = 0; i < 40; i++) {
                    assertEquals(me, assertThrows(NetnsLock.HeldException.class, () -> NetnsLock.acquire(a.name())).holderPid());
                }
                // Another namespace has a lock of its own.
                NetnsLock.acquire(b.name()).close();
            } finally {
                long t0 = System.nanoTime();
                held.close();
                assertTrue(System.nanoTime() - t0 < 1_000_000_000L, "close does not hang on the acceptor");
            }
            // Released: the next daemon may start.
            NetnsLock.acquire(a.name()).close();
        }
    }
}
