package io.nftproxy.http;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * At most {@code max} open connections on one server; more are closed as soon as they are accepted. Probes use a
 * connection or two: without a cap, a client trickling in thousands of connections took every descriptor the
 * process had, and with them the ones the sync loop, the nftables monitor and netlink need (issue 10). Shared by
 * all of one server's channels.
 */
@ChannelHandler.Sharable
public final class ConnectionLimit extends ChannelInboundHandlerAdapter {
    /** Per server: far above what health probes need, far below a process's descriptor limit. */
    public static final int DEFAULT_MAX = 128;

    private final int max;
    private final AtomicInteger open = new AtomicInteger();

    public ConnectionLimit(int max) {
        if (max < 1) throw new IllegalArgumentException("max " + max);
        this.max = max;
    }

    @Override public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (open.incrementAndGet() > max) {
            ctx.close();
            return;
        }
        super.channelActive(ctx);
    }

    @Override public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        open.decrementAndGet();
        super.channelInactive(ctx);
    }

    /** Connections open now, the refused ones until their close completes included. */
    public int open() { return open.get(); }
}
