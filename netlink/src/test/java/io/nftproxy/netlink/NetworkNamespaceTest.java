package io.nftproxy.netlink;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The namespace handle: its names, and the one rule by which a call in the namespace fails. */
class NetworkNamespaceTest {
    private static final NetworkNamespace HOST = NetworkNamespace.host();

    @Test
    void anIoFailureLeavesUnchanged() {
        IOException cause = new IOException("open /proc/sys/net/netfilter/nf_conntrack_max: Permission denied");
        assertSame(cause, assertThrows(IOException.class, () -> HOST.call(() -> { throw cause; })));
    }

    @Test
    void anUncheckedFailureBecomesAnIoExceptionWithItsMessage() {
        IOException e = assertThrows(IOException.class, () -> HOST.call(() -> Long.parseLong("x")));
        assertEquals("For input string: \"x\"", e.getMessage());
        assertInstanceOf(NumberFormatException.class, e.getCause());
    }

    @Test
    void aCheckedFailureWithoutMessageIsNamedNotPrintedAsNull() {
        IOException e = assertThrows(IOException.class, () -> HOST.call(() -> { throw new java.util.concurrent.TimeoutException(); }));
        assertEquals("java.util.concurrent.TimeoutException", e.getMessage());
    }

    @Test
    void anInterruptBecomesAnInterruptedIoExceptionAndTheFlagStaysSet() {
        try {
            InterruptedIOException e = assertThrows(InterruptedIOException.class, () -> HOST.call(() -> { throw new InterruptedException(); }));
            assertInstanceOf(InterruptedException.class, e.getCause());
            assertTrue(e.getMessage().contains("this network namespace"), e.getMessage());
            assertTrue(Thread.interrupted(), "the caller's interrupt flag is set again (and cleared here)");
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void anErrorLeavesUnchanged() {
        AssertionError error = new AssertionError("a bug");
        assertSame(error, assertThrows(AssertionError.class, () -> HOST.call(() -> { throw error; })));
    }

    @Test
    void theHostRunsOnTheCallersThreadAndCommandsRunAsGiven() throws IOException {
        Thread caller = Thread.currentThread();
        assertSame(caller, HOST.call(Thread::currentThread));
        try (NetworkNamespace.Session s = HOST.session()) {
            assertSame(caller, s.call(Thread::currentThread));
        }
        assertArrayEquals(new String[] {"nft", "-f", "-"}, HOST.command("nft", "-f", "-"));
        assertArrayEquals(new String[] {"ip", "netns", "exec", "n1", "nft"}, NetworkNamespace.named("n1").command("nft"));
    }

    @Test
    void namesAreCheckedAndNamed() {
        assertEquals("network namespace nftp-x-1", NetworkNamespace.named("nftp-x-1").describe());
        assertEquals("this network namespace", HOST.describe());
        assertEquals(NetworkNamespace.named("a"), NetworkNamespace.named("a"));
        assertNotEquals(HOST, NetworkNamespace.named("a"));
        assertFalse(HOST.name().isPresent());
        for (String bad : new String[] {"", "..", "../x", "-a", "a/b", "a b", "x".repeat(65)}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NetworkNamespace.named(bad));
            assertTrue(e.getMessage().contains("allowed"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> NetworkNamespace.named(null));
    }

    /** The rule holds on a namespace's thread too: the task's failure crosses the thread boundary and is wrapped once. */
    @Test
    void aNamedNamespaceRunsTheTaskInsideByTheSameRule() throws Exception {
        KernelTests.assumeAvailable();
        String host = Files.readSymbolicLink(Path.of("/proc/thread-self/ns/net")).toString();
        try (KernelNamespace k = KernelNamespace.create("nl")) {
            NetworkNamespace ns = k.handle();
            Callable<String> where = () -> Files.readSymbolicLink(Path.of("/proc/thread-self/ns/net")).toString();
            String inside = ns.call(where);
            assertNotEquals(host, inside);
            try (NetworkNamespace.Session s = ns.session()) {
                assertEquals(s.call(Thread::currentThread), s.call(Thread::currentThread), "a session keeps its thread");
                assertEquals(inside, s.call(where));
            }
            IOException cause = new IOException("kept");
            assertSame(cause, assertThrows(IOException.class, () -> ns.call(() -> { throw cause; })));
            IOException e = assertThrows(IOException.class, () -> ns.call(() -> Long.parseLong("y")));
            assertInstanceOf(NumberFormatException.class, e.getCause());
            Commands.Result r = ns.exec(Duration.ofSeconds(30), null, "readlink", "/proc/self/ns/net");
            assertTrue(r.ok(), r.stderr());
            assertEquals(inside, r.stdout().strip());
        }
    }
}
