package io.nftproxy.netlink;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NetnsThreadTest {
    /** The inode of /proc/thread-self/ns/net identifies the namespace the calling thread is in. */
    private static String currentNetns() throws IOException {
        return Files.readSymbolicLink(Path.of("/proc/thread-self/ns/net")).toString();
    }

    @Test
    void tasksRunInTheNamespaceWhileTheCallerStaysInTheHost() throws Exception {
        KernelTests.assumeAvailable();
        String host = currentNetns();
        try (KernelNamespace ns = KernelNamespace.create("nl"); NetnsThread t = NetnsThread.start(ns.handle())) {
            String inside = t.call(NetnsThreadTest::currentNetns);
            assertNotEquals(host, inside);
            assertEquals(inside, t.call(NetnsThreadTest::currentNetns), "the same thread, the same namespace");
            assertEquals(host, currentNetns());
            String viaIp = KernelNamespace.runChecked("ip", "netns", "exec", ns.name(), "readlink", "/proc/self/ns/net").strip();
            assertEquals(viaIp, inside);
        }
    }

    @Test
    void exceptionsReachTheCallerUnchanged() throws Exception {
        IllegalStateException boom = new IllegalStateException("boom");
        try (NetnsThread t = NetnsThread.host("test-host")) {
            assertSame(boom, assertThrows(IllegalStateException.class, () -> t.call(() -> { throw boom; })));
            assertEquals(42, (int) t.call(() -> 42), "the thread survives a failed task");
        }
    }

    /** A host thread has no namespace to join, so even a caller with its interrupt flag set gets a working one. */
    @Test
    void aHostThreadStartsForAnInterruptedCaller() throws Exception {
        Thread.currentThread().interrupt();
        NetnsThread t;
        try {
            t = NetnsThread.host("test-interrupted");
        } finally {
            assertTrue(Thread.interrupted(), "the caller's interrupt is left for it to handle");
        }
        try (t) {
            assertEquals(42, (int) t.call(() -> 42));
        }
    }

    @Test
    void aMissingNamespaceFailsToStartAndSaysWhy() {
        IOException e = assertThrows(IOException.class, () -> NetnsThread.start(NetworkNamespace.named("nftp-nl-does-not-exist-" + ProcessHandle.current().pid())));
        assertTrue(e.getMessage().contains("No such file or directory"), e.getMessage());
    }

    @Test
    void namesThatCouldEscapeRunNetnsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> NetworkNamespace.named("../../proc/1/ns/net"));
        assertThrows(IllegalArgumentException.class, () -> NetworkNamespace.named(".."));
    }

    @Test
    void aClosedThreadRefusesWork() {
        NetnsThread t = NetnsThread.host("test-closed");
        t.close();
        assertThrows(IllegalStateException.class, () -> t.call(() -> 1));
    }
}
