package io.nftproxy.it.api;

import io.nftproxy.netlink.NetnsThread;

import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One HTTP/1.0 GET to a loopback port inside a test's network namespace (where a child daemon's /healthz listens),
 * from a thread that joined it: the JDK's HttpClient opens its sockets on threads of its own, outside the namespace.
 */
public final class NamespaceHttp {
    public record Answer(int status, String body) {}

    private NamespaceHttp() {}

    public static Answer get(NetnsThread in, int port, String path) throws Exception {
        return in.call(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2_000);
                s.setSoTimeout(5_000);
                s.getOutputStream().write(("GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                s.getInputStream().transferTo(out);
                String all = out.toString(StandardCharsets.UTF_8);
                int body = all.indexOf("\r\n\r\n");
                return new Answer(Integer.parseInt(all.substring(9, 12)), body < 0 ? "" : all.substring(body + 4));
            }
        });
    }
}
