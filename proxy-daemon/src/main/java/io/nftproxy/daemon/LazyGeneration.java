package io.nftproxy.daemon;

import io.nftproxy.netlink.nft.RulesetGeneration;

import java.io.IOException;

/**
 * The namespace's nf_tables generation, for {@link io.nftproxy.sync.GenerationTracker}: the socket is opened in the
 * node's network on first use (not at wiring: no netlink before the lock is held), and opened again after a
 * failure. Used by the sync thread and the early read-back, one at a time.
 */
final class LazyGeneration implements AutoCloseable {
    private final NodeNetwork network;
    private RulesetGeneration socket;

    LazyGeneration(NodeNetwork network) { this.network = network; }

    synchronized long current() throws Exception {
        if (socket == null) socket = network.call(RulesetGeneration::open);
        try {
            return socket.current();
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override public synchronized void close() {
        if (socket != null) socket.close();
        socket = null;
    }
}
