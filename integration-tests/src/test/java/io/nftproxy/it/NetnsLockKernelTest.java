package io.nftproxy.it;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.lock.NetnsLock;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one-writer lock on a real kernel: exclusive within a network namespace, independent across them. */
class NetnsLockKernelTest {
    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailable();
    }

    @Test
    void oneHolderPerNetworkNamespaceNamedToTheLoser() throws Exception {
        try (KernelNamespace a = KernelNamespace.create("locka"); KernelNamespace b = KernelNamespace.create("lockb")) {
            NetnsLock held = NetnsLock.acquire(a.handle());
            try {
                NetnsLock.HeldException e = assertThrows(NetnsLock.HeldException.class, () -> NetnsLock.acquire(a.handle()));
                long me = ProcessHandle.current().pid();
                assertEquals(me, e.holderPid(), e.getMessage());
                assertTrue(e.getMessage().contains("pid " + me + " (") && e.getMessage().contains("@nftproxy-lock"), e.getMessage());
                // Asked again and again, the holder still answers: its backlog never fills.
                for (int i = 0; i < 40; i++) {
                    assertEquals(me, assertThrows(NetnsLock.HeldException.class, () -> NetnsLock.acquire(a.handle())).holderPid());
                }
                // Another namespace has a lock of its own.
                NetnsLock.acquire(b.handle()).close();
            } finally {
                long t0 = System.nanoTime();
                held.close();
                assertTrue(System.nanoTime() - t0 < 1_000_000_000L, "close does not hang on the acceptor");
            }
            // Released: the next daemon may start.
            NetnsLock.acquire(a.handle()).close();
        }
    }

    @Test
    void nftproxyRunBesideAHolderExitsWithOneLineNamingIt() throws Exception {
        try (KernelNamespace a = KernelNamespace.create("lockrun"); NetnsLock held = NetnsLock.acquire(a.handle())) {
            CliRun r = CliRun.of("run", "--manifests", "../examples", "--hostname-override", "k8s-node-1",
                    "--healthz-bind-address", "127.0.0.1:0", "--metrics-bind-address", "127.0.0.1:0", "--netns", a.name());
            assertEquals(io.nftproxy.cli.ExitCodes.INPUT_UNREADABLE, r.exit(), r.err());
            String line = r.err().lines().filter(l -> l.startsWith("nftproxy: cannot start: ")).findFirst().orElse(r.err());
            assertTrue(line.startsWith("nftproxy: cannot start: another nftproxy already writes the tables of this network namespace (pid "
                    + ProcessHandle.current().pid()), line);
            assertTrue(!line.contains("Exception"), line);
            assertEquals("", a.nftOut("list", "ruleset").strip(), "nothing was written");
        }
    }
}
