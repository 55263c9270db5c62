package io.nftproxy.http;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.ReadTimeoutHandler;

import java.util.function.Function;

/**
 * Pipeline of the health, metrics and health-check-nodeport servers: a bounded number of connections, small requests
 * only, idle clients dropped.
 */
public final class HttpServerInitializer extends ChannelInitializer<SocketChannel> {
    /** Probes send a few hundred bytes; anything larger is not a probe. */
    static final int MAX_REQUEST_BYTES = 8192;

    private final Function<String, Response> routes;
    private final ConnectionLimit limit;

    public HttpServerInitializer(Function<String, Response> routes, ConnectionLimit limit) {
        this.routes = routes;
        this.limit = limit;
    }

    @Override protected void initChannel(SocketChannel ch) {
        ch.pipeline()
                .addLast(limit)
                .addLast(new ReadTimeoutHandler(10))
                .addLast(new HttpServerCodec(4096, 8192, 8192))
                .addLast(new HttpObjectAggregator(MAX_REQUEST_BYTES))
                .addLast(new HttpServerHandler(routes));
    }
}
