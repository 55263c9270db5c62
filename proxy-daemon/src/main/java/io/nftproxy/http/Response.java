package io.nftproxy.http;

import java.util.Map;

/** A plain HTTP response as data, so handlers are pure functions that tests call without a socket. */
public record Response(int status, String contentType, Map<String, String> headers, String body) {
    public Response {
        headers = Map.copyOf(headers);
    }

    /** As kube-proxy's plain-text answers (/proxyMode, /healthz on the metrics port): never sniffed as HTML. */
    public static Response text(int status, String body) {
        return new Response(status, "text/plain; charset=utf-8", Map.of("X-Content-Type-Options", "nosniff"), body);
    }

    public static Response json(int status, String body) {
        return new Response(status, "application/json", Map.of("X-Content-Type-Options", "nosniff"), body);
    }
}
