package io.nftproxy.it.daemon;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;

/**
 * A client trickling connections into one port and holding them open, as the attack in issue 10 row 8: run as its
 * own process inside the test's namespace ({@code main(port, total, held, seconds)}), so its descriptors are not the
 * daemon's. Bounded: at most {@code total} connections over at most {@code seconds}, at most {@code held} open at once
 * (the oldest is closed to open a new one), spread evenly over the time. Prints how many it opened when done, then holds until killed.
 */
public final class ConnectionFlood {
    private ConnectionFlood() {}

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]), total = Integer.parseInt(args[1]), held = Integer.parseInt(args[2]);
        long seconds = Long.parseLong(args[3]), start = System.nanoTime(), deadline = start + seconds * 1_000_000_000L;
        InetSocketAddress target = new InetSocketAddress("127.0.0.1", port);
        ArrayDeque<SocketChannel> open = new ArrayDeque<>();
        int opened = 0, failed = 0;
        while (opened < total && System.nanoTime() < deadline) {
            try {
                SocketChannel ch = SocketChannel.open();
                ch.configureBlocking(false);
                ch.connect(target);
                open.addLast(ch);
                opened++;
            } catch (IOException e) {
                failed++;
                Thread.sleep(1);
            }
            if (open.size() > held) open.pollFirst().close();
            // Spread evenly over the time, so the flood lasts as long as the test looks.
            long due = start + opened * seconds * 1_000_000_000L / total;
            if (due > System.nanoTime()) Thread.sleep((due - System.nanoTime()) / 1_000_000);
        }
        System.out.println("flood done opened=" + opened + " failed=" + failed + " open=" + open.size());
        Thread.sleep(Long.MAX_VALUE);
    }
}
