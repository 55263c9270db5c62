package io.nftproxy.netlink.monitor;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.function.IntPredicate;

/**
 * Tells our nf_tables commits from anyone else's by the PID the kernel puts in {@code NEWGEN}. That PID is the
 * <em>thread</em> that sent the batch ({@code task_pid_nr(current)}), so an in-process libnftables commit shows
 * the id of the ctx's thread, which is one of {@code /proc/self/task/*}; an {@code nft -f} commit shows the
 * child's PID, which the exec client {@linkplain #registerChild registers} before it writes the script, so the
 * registration always precedes the commit.
 *
 * <p>Children are remembered in a bounded list of the most recent ones rather than removed when they exit: the
 * monitor reads the notification after the child is gone. PIDs are only reused after the PID space wraps, far
 * more spawns than the list holds.
 *
 * <p>Limit: the kernel reports the PID as seen from the initial PID namespace, {@code /proc/self} the one of
 * the JVM. In a container with a private PID namespace they differ and our own commits would look foreign; run
 * the daemon in the host PID namespace (as a systemd unit, or {@code hostPID: true}).
 */
public final class OwnProcesses implements IntPredicate {
    static final int RECENT_CHILDREN = 256;

    private final Path tasks;
    private final ArrayDeque<Integer> children = new ArrayDeque<>();

    OwnProcesses(Path tasks) { this.tasks = tasks; }

    /** The threads of this JVM, plus whatever children are registered. */
    public static OwnProcesses thisProcess() { return new OwnProcesses(Path.of("/proc/self/task")); }

    /** Marks a child process (an {@code nft} we spawned) as ours. */
    public void registerChild(long pid) {
        if (pid <= 0 || pid > Integer.MAX_VALUE) throw new IllegalArgumentException("not a pid: " + pid);
        synchronized (children) {
            children.addLast((int) pid);
            if (children.size() > RECENT_CHILDREN) children.removeFirst();
        }
    }

    @Override public boolean test(int pid) {
        if (pid <= 0) return false;
        synchronized (children) {
            if (children.contains(pid)) return true;
        }
        return Files.isDirectory(tasks.resolve(Integer.toString(pid)));
    }
}
