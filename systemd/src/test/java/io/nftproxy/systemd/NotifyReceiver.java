package io.nftproxy.systemd;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import jnr.unixsocket.UnixDatagramChannel;
import jnr.unixsocket.UnixSocketAddress;
import jnr.unixsocket.UnixSocketOptions;

/** The systemd side of sd_notify: a real AF_UNIX datagram socket bound to a path or an abstract name. */
final class NotifyReceiver implements AutoCloseable {
    private static final AtomicInteger COUNTER = new AtomicInteger();

    private final UnixDatagramChannel channel;
    private final String notifySocket;
    private final Path path;

    private NotifyReceiver(UnixDatagramChannel channel, String notifySocket, Path path) {
        this.channel = channel;
        this.notifySocket = notifySocket;
        this.path = path;
    }

    /** Bound to {@code dir/notify.sock}, as systemd's /run/systemd/notify. */
    static NotifyReceiver atPath(Path dir) throws IOException {
        Path socket = dir.resolve("notify.sock");
        UnixDatagramChannel channel = UnixDatagramChannel.open();
        channel.bind(new UnixSocketAddress(socket.toString()));
        return new NotifyReceiver(channel, socket.toString(), socket);
    }

    /** Bound to a per-run abstract name; announced as {@code @name}, as systemd --user does. */
    static NotifyReceiver abstractName() throws IOException {
        String name = "nftp-sdnotify-" + ProcessHandle.current().pid() + "-" + COUNTER.incrementAndGet();
        UnixDatagramChannel channel = UnixDatagramChannel.open();
        channel.bind(new UnixSocketAddress("\0" + name));
        return new NotifyReceiver(channel, "@" + name, null);
    }

    /** The value for {@code NOTIFY_SOCKET}. */
    String notifySocket() {
        return notifySocket;
    }

    /** The next datagram, or empty when none arrives within {@code timeout}. */
    Optional<String> receive(Duration timeout) throws IOException {
        channel.setOption(UnixSocketOptions.SO_RCVTIMEO, (int) Math.max(1, timeout.toMillis()));
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        long start = System.nanoTime();
        try {
            channel.receive(buffer);
        } catch (IOException e) {
            // SO_RCVTIMEO expiry surfaces as an IOException (EAGAIN); anything sooner is a real error.
            if (System.nanoTime() - start >= timeout.toNanos() * 9 / 10) {
                return Optional.empty();
            }
            throw e;
        }
        buffer.flip();
        return Optional.of(StandardCharsets.UTF_8.decode(buffer).toString());
    }

    /** Every datagram arriving within {@code window}, in order. */
    List<String> receiveFor(Duration window) throws IOException {
        List<String> messages = new ArrayList<>();
        long deadline = System.nanoTime() + window.toNanos();
        long left;
        while ((left = deadline - System.nanoTime()) > 1_000_000) {
            receive(Duration.ofNanos(left)).ifPresent(messages::add);
        }
        return messages;
    }

    @Override
    public void close() throws IOException {
        channel.close();
        if (path != null) {
            Files.deleteIfExists(path);
        }
    }
}
