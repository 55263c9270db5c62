package io.nftproxy.systemd;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import jnr.unixsocket.UnixDatagramChannel;
import jnr.unixsocket.UnixSocketAddress;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sd_notify protocol: newline-separated {@code KEY=value} assignments in one datagram to the AF_UNIX socket
 * named by {@code $NOTIFY_SOCKET}.
 *
 * <p>Notification is advisory. Without {@code NOTIFY_SOCKET} (run by hand, in a container, in tests) every call is
 * a silent no-op, and a failed send is logged once at WARN and reported as {@code false}; nothing here throws,
 * because a daemon must never stop programming the dataplane over a status message.
 */
public final class SdNotify {
    private static final Logger LOG = LoggerFactory.getLogger(SdNotify.class);

    private final Map<String, String> environment;
    private final long pid;
    private final Optional<UnixSocketAddress> socket;
    private final String socketName;
    private final AtomicBoolean sendFailureLogged = new AtomicBoolean();

    /** Reads {@code NOTIFY_SOCKET} (and, for {@link #watchdogInterval()}, the watchdog variables) from the process. */
    public static SdNotify fromEnvironment() {
        return new SdNotify(System.getenv());
    }

    /** For tests and embedding: the environment as a map, the current process as our pid. */
    public SdNotify(Map<String, String> environment) {
        this(environment, ProcessHandle.current().pid());
    }

    /** {@code pid} is what {@code WATCHDOG_PID} is compared with and what {@link #mainPid()} announces. */
    public SdNotify(Map<String, String> environment, long pid) {
        this.environment = Map.copyOf(Objects.requireNonNull(environment, "environment"));
        this.pid = pid;
        this.socketName = this.environment.getOrDefault("NOTIFY_SOCKET", "");
        this.socket = parseSocket(socketName);
    }

    private static Optional<UnixSocketAddress> parseSocket(String name) {
        if (name.isEmpty()) {
            return Optional.empty();
        }
        // jnr-unixsocket sizes the sockaddr by the name's length in chars, not in UTF-8 bytes, so a non-ASCII name
        // would be cut short and, for an abstract socket, silently address a different name.
        if (!StandardCharsets.US_ASCII.newEncoder().canEncode(name)) {
            LOG.warn("NOTIFY_SOCKET {} is not ASCII; systemd notifications disabled", name);
            return Optional.empty();
        }
        if (name.charAt(0) != '@' && name.charAt(0) != '/') {
            // e.g. systemd 253's "vsock:CID:PORT", used to notify a VM's host; a node proxy never runs that way.
            LOG.warn("NOTIFY_SOCKET {} is neither a path nor an abstract name; systemd notifications disabled", name);
            return Optional.empty();
        }
        try {
            // Abstract namespace (systemd --user, some containers): '@' stands for the leading NUL byte.
            return Optional.of(new UnixSocketAddress(name.charAt(0) == '@' ? '\0' + name.substring(1) : name));
        } catch (RuntimeException | LinkageError e) {
            // jnr's native stub could not load (noexec /tmp for jffi, an unknown platform): run without systemd.
            LOG.warn("cannot use NOTIFY_SOCKET {}: {}; systemd notifications disabled", name, e.toString());
            return Optional.empty();
        }
    }

    /** Whether notifications go anywhere, i.e. we were started by systemd with {@code Type=notify}. */
    public boolean isEnabled() {
        return socket.isPresent();
    }

    /** The pid this instance speaks for. */
    public long pid() {
        return pid;
    }

    /** {@code READY=1} with a status line: start-up is complete (for nftproxy: the first sync was applied). */
    public boolean ready(String status) {
        return send("READY=1\nSTATUS=" + oneLine(status));
    }

    /** A free-form status line, shown by {@code systemctl status}. */
    public boolean status(String status) {
        return send("STATUS=" + oneLine(status));
    }

    /** {@code WATCHDOG=1}: we are alive. Normally sent by {@link Watchdog}, not by hand. */
    public boolean watchdog() {
        return send("WATCHDOG=1");
    }

    /** {@code STOPPING=1}: shutdown has begun, so systemd shows "deactivating" rather than a hang. */
    public boolean stopping() {
        return send("STOPPING=1");
    }

    /**
     * {@code RELOADING=1}, to be followed by {@link #ready(String)} when the reload is done. MONOTONIC_USEC is
     * required by {@code Type=notify-reload} (systemd 253) to tie the message to this reload; HotSpot's
     * {@code System.nanoTime()} reads CLOCK_MONOTONIC on Linux, the clock systemd expects.
     */
    boolean reloading() {
        return send("RELOADING=1\nMONOTONIC_USEC=" + System.nanoTime() / 1_000);
    }

    /** {@code MAINPID=} this process: for a launcher that forks the JVM instead of exec'ing it. */
    public boolean mainPid() {
        return send("MAINPID=" + pid);
    }

    /**
     * The watchdog period systemd asked for, as {@code sd_watchdog_enabled()} decides it: {@code WATCHDOG_USEC} set
     * to a positive number, and {@code WATCHDOG_PID} either unset or equal to our pid (the variables are inherited
     * by children, which must not ping on the parent's behalf).
     */
    public Optional<Duration> watchdogInterval() {
        String usec = environment.get("WATCHDOG_USEC");
        if (usec == null || usec.isEmpty()) {
            return Optional.empty();
        }
        long micros;
        try {
            micros = Long.parseLong(usec.trim());
        } catch (NumberFormatException e) {
            LOG.warn("WATCHDOG_USEC={} is not a number; watchdog disabled", usec);
            return Optional.empty();
        }
        if (micros <= 0) {
            LOG.warn("WATCHDOG_USEC={} is not positive; watchdog disabled", usec);
            return Optional.empty();
        }
        String watchdogPid = environment.get("WATCHDOG_PID");
        if (watchdogPid != null && !watchdogPid.isEmpty()) {
            long target;
            try {
                target = Long.parseLong(watchdogPid.trim());
            } catch (NumberFormatException e) {
                LOG.warn("WATCHDOG_PID={} is not a number; watchdog disabled", watchdogPid);
                return Optional.empty();
            }
            if (target != pid) {
                LOG.debug("WATCHDOG_PID={} is not our pid {}; the watchdog belongs to another process", target, pid);
                return Optional.empty();
            }
        }
        return Optional.of(Duration.ofNanos(Math.multiplyExact(micros, 1_000L)));
    }

    /**
     * Sends raw assignments ({@code KEY=value}, newline-separated) in one datagram. Returns whether the datagram was
     * sent; {@code false} when notifications are disabled or the send failed.
     */
    public boolean send(String assignments) {
        if (socket.isEmpty()) {
            return false;
        }
        byte[] bytes = assignments.getBytes(StandardCharsets.UTF_8);
        // A fresh socket per message, as libsystemd's sd_notify does: no state to guard across threads, and a
        // notify socket recreated by a systemd re-exec is picked up by the next message.
        try (UnixDatagramChannel channel = UnixDatagramChannel.open()) {
            int sent = channel.send(ByteBuffer.wrap(bytes), socket.get());
            if (sent != bytes.length) {
                throw new IOException("short send: " + sent + " of " + bytes.length + " bytes");
            }
            return true;
        } catch (IOException | RuntimeException | LinkageError e) {
            // Logged once: a watchdog that pings every few seconds into a dead socket must not flood the journal.
            if (sendFailureLogged.compareAndSet(false, true)) {
                LOG.warn("cannot notify systemd at NOTIFY_SOCKET={}: {} (further failures are logged at DEBUG)",
                        socketName, e.toString());
            } else {
                LOG.debug("cannot notify systemd at NOTIFY_SOCKET={}", socketName, e);
            }
            return false;
        }
    }

    // STATUS text may carry API-derived strings (service names, error messages); a newline in it would let that text
    // add its own assignments such as READY=1 or MAINPID=.
    private static String oneLine(String status) {
        if (status == null) {
            return "";
        }
        return status.replace('\n', ' ').replace('\r', ' ').replace('\0', ' ');
    }

    @Override
    public String toString() {
        return isEnabled() ? "SdNotify[" + socketName + "]" : "SdNotify[disabled]";
    }
}
