package io.nftproxy.daemon;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.net.IpAddress;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NodeNetworkKernelTest {
    private static String threadNetns() throws Exception {
        return Files.readSymbolicLink(Path.of("/proc/thread-self/ns/net")).toString();
    }

    @Test
    void aNamedNamespaceRunsEveryCallOnOneThreadInsideIt() throws Exception {
        KernelTests.assumeAvailable();
        try (KernelNamespace ns = KernelNamespace.create("nodenet")) {
            String inside = ns.execChecked("readlink", "/proc/self/ns/net").strip();
            try (NodeNetwork network = NodeNetwork.namespace(ns.handle())) {
                Thread first = network.call(Thread::currentThread);
                assertEquals(inside, network.call(NodeNetworkKernelTest::threadNetns));
                assertSame(first, network.call(Thread::currentThread), "the thread is kept, not started per call");
                ns.ip("addr", "add", "192.0.2.7/24", "dev", "lo");
                assertTrue(network.interfaceAddresses().contains(IpAddress.parse("192.0.2.7")), "the namespace's own addresses");
                network.close();
                Thread second = network.call(Thread::currentThread);
                assertNotEquals(first, second, "a call after close starts a new thread");
                assertTrue(!first.isAlive() || joined(first), "close stops the kept thread");
                assertEquals(inside, network.call(NodeNetworkKernelTest::threadNetns));
            }
            assertNotEquals(inside, threadNetns(), "the caller stays where it was");
        }
    }

    private static boolean joined(Thread t) throws InterruptedException {
        t.join(5_000);
        return !t.isAlive();
    }
}
