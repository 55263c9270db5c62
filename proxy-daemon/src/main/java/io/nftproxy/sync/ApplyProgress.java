package io.nftproxy.sync;

import io.nftproxy.net.IpFamily;

/**
 * Told after each part of a transaction that was cut into parts ({@link KernelTable#DEFAULT_COMMAND_BUDGET}) has
 * been committed: a cold start of tens of thousands of Services takes seconds, and this is how the daemon says so
 * while it goes. Called on the sync thread; must not block.
 */
@FunctionalInterface
public interface ApplyProgress {
    ApplyProgress NONE = (family, part, parts, commandsDone, commands) -> { };

    /**
     * @param part         parts committed so far, 1..parts
     * @param commandsDone commands in those parts
     * @param commands     commands in the whole transaction
     */
    void partCommitted(IpFamily family, int part, int parts, int commandsDone, int commands);
}
