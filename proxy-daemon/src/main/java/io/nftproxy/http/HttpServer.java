package io.nftproxy.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.nftproxy.net.IpAddress;

import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A small HTTP server on one address: the proxy's /healthz and /livez, /metrics, and each health-check NodePort.
 * Servers share one event-loop group (one thread: these are probes, not traffic). Epoll when available, NIO otherwise.
 * The daemon's short periodic checks run on that thread too ({@link #eventLoop()}), so they need none of their own.
 */
public final class HttpServer implements AutoCloseable {
    private static final EventLoopGroup GROUP = new MultiThreadIoEventLoopGroup(1, ioFactory());
    /** Probes send a few hundred bytes; anything larger is not a probe. */
    private static final int MAX_REQUEST_BYTES = 8192;

    private final Channel channel;

    private HttpServer(Channel channel) {
        this.channel = channel;
    }

    /**
     * Binds and starts serving.
     *
     * @param name what the server is, for the error: "healthz server", "health check nodeport of ns/name"
     * @throws BindException when the address cannot be bound (in use, not local, no permission); the message names
     *                       the server, the address and the cause
     */
    public static HttpServer start(String name, InetSocketAddress address, Function<String, Response> routes)
            throws InterruptedException, BindException {
        return start(name, address, routes, ConnectionLimit.DEFAULT_MAX);
    }

    /**
     * As {@link #start(String, InetSocketAddress, Function)}, with at most {@code maxConnections} open at once (and
     * the process's {@link DescriptorBudget} over all servers).
     */
    public static HttpServer start(String name, InetSocketAddress address, Function<String, Response> routes,
                                   int maxConnections) throws InterruptedException, BindException {
        try {
            ConnectionLimit limit = new ConnectionLimit(name, maxConnections, DescriptorBudget.process());
            Channel ch = new ServerBootstrap().group(GROUP).channel(serverChannel())
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        // A bounded number of connections, small requests only, idle clients dropped.
                        @Override protected void initChannel(SocketChannel c) {
                            c.pipeline()
                                    .addLast(limit)
                                    .addLast(new ReadTimeoutHandler(10))
                                    .addLast(new HttpServerCodec(4096, 8192, 8192))
                                    .addLast(new HttpObjectAggregator(MAX_REQUEST_BYTES))
                                    .addLast(new HttpServerHandler(routes));
                        }
                    })
                    .bind(address).sync().channel();
            return new HttpServer(ch);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            // Netty's native errors say only "bind(..) failed with error(-99)": name the server and the address.
            BindException b = new BindException("cannot bind the " + name + " to " + IpAddress.hostPort(address) + ": "
                    + bindCause(e));
            b.initCause(e);
            throw b;
        }
    }

    /** The errno's meaning where Netty gives only its number. */
    private static String bindCause(Exception e) {
        String m = String.valueOf(e.getMessage());
        if (m.contains("error(-98)") || m.contains("Address already in use")) return "address already in use (EADDRINUSE)";
        if (m.contains("error(-99)") || m.contains("Cannot assign requested address")) {
            return "not an address of this host (EADDRNOTAVAIL)";
        }
        if (m.contains("error(-13)") || m.contains("Permission denied")) return "permission denied (EACCES)";
        return m;
    }

    /**
     * The servers' event-loop thread as a scheduler, for checks that take microseconds and never block (a blocked
     * task holds every probe back). Shut down with the process, never by a caller: cancel the tasks instead.
     */
    public static ScheduledExecutorService eventLoop() { return GROUP.next(); }

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
