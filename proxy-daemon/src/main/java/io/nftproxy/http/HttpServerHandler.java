package io.nftproxy.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;

import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * The last handler of the pipeline: maps a request path to a {@link Response} through {@code routes} (a pure
 * function, null for an unknown path) and writes it. Sits after {@code HttpServerCodec} and
 * {@code HttpObjectAggregator}:
 * <pre>HttpServerCodec -> HttpObjectAggregator -> HttpServerHandler</pre>
 */
public final class HttpServerHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final Function<String, Response> routes;

    public HttpServerHandler(Function<String, Response> routes) {
        this.routes = routes;
    }

    @Override protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        Response r;
        if (!req.decoderResult().isSuccess()) {
            r = Response.text(400, "bad request\n");
        } else {
            String path = new QueryStringDecoder(req.uri()).path();
            Response routed = routes.apply(path);
            r = routed != null ? routed : Response.text(404, "not found\n");
        }
        byte[] body = r.body().getBytes(StandardCharsets.UTF_8);
        FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(r.status()),
                Unpooled.wrappedBuffer(body));
        resp.headers().set(HttpHeaderNames.CONTENT_TYPE, r.contentType());
        resp.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        r.headers().forEach((k, v) -> resp.headers().set(k, v));
        boolean keepAlive = HttpUtil.isKeepAlive(req) && req.decoderResult().isSuccess();
        if (keepAlive) {
            resp.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            ctx.writeAndFlush(resp);
        } else {
            resp.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(resp).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
