package io.nftproxy.demo;

import io.nftproxy.netlink.NetnsThread;
import io.nftproxy.net.IpAddress;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * A TCP and a UDP server in one namespace that answer every connection or datagram with one line,
 * {@code "<name> <peer address>"}: which backend a flow reached, and the source address that backend saw, which
 * is how the tests observe masquerading and client-IP preservation.
 *
 * <p>The sockets are opened on a thread that joined the namespace, so they live there; the serving threads are
 * ordinary JVM threads, since an open socket stays in the namespace it was created in. They end when the server
 * is closed.
 */
public final class EchoServer implements AutoCloseable {
    private final String name;
    private final ServerSocketChannel tcp;
    private final DatagramChannel udp;
    private final Thread tcpLoop, udpLoop;

    private EchoServer(String name, ServerSocketChannel tcp, DatagramChannel udp) {
        this.name = name;
        this.tcp = tcp;
        this.udp = udp;
        this.tcpLoop = new Thread(this::serveTcp, "echo-tcp-" + name);
        this.udpLoop = new Thread(this::serveUdp, "echo-udp-" + name);
        tcpLoop.setDaemon(true);
        udpLoop.setDaemon(true);
        tcpLoop.start();
        udpLoop.start();
    }

    /**
     * Listens on the wildcard address, IPv4 and IPv6 in one dual-stack socket each (Java reports an IPv4 peer of
     * such a socket as a plain IPv4 address), on {@code tcpPort} and {@code udpPort} in the namespace of {@code in}.
     */
    public static EchoServer start(NetnsThread in, String name, int tcpPort, int udpPort) throws Exception {
        ServerSocketChannel tcp = in.call(() -> ServerSocketChannel.open().bind(new InetSocketAddress(tcpPort), 64));
        DatagramChannel udp;
        try {
            udp = in.call(() -> DatagramChannel.open().bind(new InetSocketAddress(udpPort)));
        } catch (Exception e) {
            tcp.close();
            throw e;
        }
        return new EchoServer(name, tcp, udp);
    }

    private byte[] reply(InetSocketAddress peer) {
        // The project's canonical text (fd00:10::1:50), which is how address plans spell them; Java's own
        // spells out every group.
        String address = IpAddress.of(peer.getAddress().getAddress()).toString();
        return (name + " " + address + "\n").getBytes(StandardCharsets.US_ASCII);
    }

    private void serveTcp() {
        while (tcp.isOpen()) {
            try (SocketChannel c = tcp.accept()) {
                c.write(ByteBuffer.wrap(reply((InetSocketAddress) c.getRemoteAddress())));
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                // One client went away mid-reply (a timed-out probe); keep serving the others.
            }
        }
    }

    private void serveUdp() {
        ByteBuffer buf = ByteBuffer.allocate(512);
        while (udp.isOpen()) {
            try {
                buf.clear();
                InetSocketAddress peer = (InetSocketAddress) udp.receive(buf);
                udp.send(ByteBuffer.wrap(reply(peer)), peer);
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                // An ICMP error for an earlier reply; the socket is still good.
            }
        }
    }

    @Override public void close() throws IOException {
        try {
            tcp.close();
        } finally {
            udp.close();
        }
        try {
            tcpLoop.join(2_000);
            udpLoop.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
