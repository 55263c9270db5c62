package io.nftproxy.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A small HTTP server on one address: the proxy's /healthz and /livez, /metrics, and each health-check NodePort.
 * Servers share one event-loop group (one thread: these are probes, not traffic). Epoll when available, NIO otherwise.
 */
public final class HttpServer implements AutoCloseable {
    private static final EventLoopGroup GROUP = new MultiThreadIoEventLoopGroup(1, ioFactory());

    private final Channel channel;

    private HttpServer(Channel channel) {
        this.channel = channel;
    }

    /** Binds and starts serving; throws when the address cannot be bound (in use, not local, no permission). */
    public static HttpServer start(InetSocketAddress address, Function<String, Response> routes) throws InterruptedException {
        Channel ch = new ServerBootstrap().group(GROUP).channel(serverChannel())
                .childHandler(new HttpServerInitializer(routes))
                .bind(address).sync().channel();
        return new HttpServer(ch);
    }

    public InetSocketAddress address() { return (InetSocketAddress) channel.localAddress(); }

    @Override public void close() {
        channel.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
    }

    private static IoHandlerFactory ioFactory() {
        return Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    }

    private static Class<? extends ServerChannel> serverChannel() {
        return Epoll.isAvailable() ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }
}
