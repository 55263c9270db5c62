package io.nftproxy.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * At most {@code max} open connections on one server, and no more than the process's {@link DescriptorBudget}
 * across all servers. Without a cap, a client trickling in thousands of connections took every descriptor the
 * process had, and with them the ones the sync loop, the nftables monitor and netlink need (issue 10).
 *
 * <p>At the cap, a new connection closes the server's <em>oldest</em> one rather than being refused itself: a flood
 * that holds its connections open would otherwise lock every probe out, while a probe sends its request as soon as
 * it connects and is answered long before it becomes the oldest. Shared by all of one server's channels, which all
 * run on one event loop.
 */
@ChannelHandler.Sharable
public final class ConnectionLimit extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionLimit.class);
    /** Per server: far above what health probes need, far below a process's descriptor limit. */
    public static final int DEFAULT_MAX = 128;
    private static final long WARN_EVERY_NANOS = 60_000_000_000L;

    private final String server;
    private final int max;
    private final DescriptorBudget budget;
    /** Open connections in accept order; each holds one share of the budget. */
    private final Deque<Channel> open = new ConcurrentLinkedDeque<>();
    private final AtomicLong closedEarly = new AtomicLong();
    private long lastWarning = System.nanoTime() - WARN_EVERY_NANOS;

    public ConnectionLimit(String server, int max, DescriptorBudget budget) {
        if (max < 1) throw new IllegalArgumentException("max " + max);
        this.server = server;
        this.max = max;
        this.budget = budget;
    }

    @Override public void channelActive(ChannelHandlerContext ctx) throws Exception {
        Channel oldest = null;
        if (!budget.tryTake()) {
            // The process's budget is spent: our oldest connection's share passes to this one, or, with none, no share.
            oldest = open.pollFirst();
            if (oldest == null) {
                closedEarly(ctx.channel(), "the process's budget of " + budget.total() + " connections is spent");
                return;
            }
        } else if (open.size() >= max) {
            oldest = open.pollFirst();
            budget.release();
        }
        open.addLast(ctx.channel());
        if (oldest != null) closedEarly(oldest, max + " connections open");
        super.channelActive(ctx);
    }

    private void closedEarly(Channel ch, String why) {
        closedEarly.incrementAndGet();
        ch.close();
        long now = System.nanoTime();
        if (now - lastWarning >= WARN_EVERY_NANOS) {
            lastWarning = now;
            LOG.warn("{}: {}, closing the oldest connections (logged once a minute while it lasts; {} closed so far)",
                    server, why, closedEarly.get());
        }
    }

    @Override public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (open.remove(ctx.channel())) budget.release();
        super.channelInactive(ctx);
    }

    /** Connections closed by the cap so far. */
    public long closedEarly() { return closedEarly.get(); }
}
