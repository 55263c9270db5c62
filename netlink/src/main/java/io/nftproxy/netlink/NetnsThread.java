package io.nftproxy.netlink;

import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One dedicated thread that, before running anything, joins a named network namespace with
 * {@code setns(open("/run/netns/NAME"), CLONE_NEWNET)}. Namespace membership is per thread on Linux, so sockets
 * and libnftables contexts created on this thread talk to that namespace while every other JVM thread stays in
 * the host namespace. That is how kernel tests and {@code --once} runs reach a throwaway namespace without running
 * the JVM inside it.
 *
 * <p>The thread never runs a task outside the namespace: if {@code setns} fails it exits, and {@link #start}
 * throws. It is also never replaced, unlike a pool worker, so its membership cannot silently revert.
 * Tasks run one at a time in submission order.
 */
public final class NetnsThread implements AutoCloseable {
    private static final long START_TIMEOUT_SECONDS = 10;
    private static final long JOIN_MILLIS = 5_000;

    private final NetworkNamespace namespace;
    private final Thread thread;
    private final BlockingQueue<FutureTask<?>> tasks = new LinkedBlockingQueue<>();
    /** Guards {@code closed} and queueing, so nothing is queued behind the poison pill where nobody would run it. */
    private final Object lock = new Object();
    private boolean closed;

    private NetnsThread(NetworkNamespace namespace, String threadName) {
        this.namespace = namespace;
        this.thread = new Thread(this::loop, threadName);
        this.thread.setDaemon(true);
    }

    /**
     * A thread in {@code namespace}: one that joined it (named {@code netns-NAME}), or for the host a thread that stays
     * where the JVM is (named {@code netns-host}).
     */
    public static NetnsThread start(NetworkNamespace namespace) throws IOException {
        return namespace.thread("netns-host");
    }

    /** A dedicated thread that stays in the namespace of the JVM (no setns), for thread-confined resources. */
    public static NetnsThread host(String threadName) {
        // Nothing to join, so nothing to wait for: an interrupted caller still gets its thread.
        NetnsThread t = new NetnsThread(NetworkNamespace.host(), threadName);
        t.thread.start();
        return t;
    }

    /** A thread that joined {@code /run/netns/NAME}; {@code name} is {@code namespace}'s, validated there. */
    static NetnsThread start(NetworkNamespace namespace, String name) throws IOException {
        NetnsThread t = new NetnsThread(namespace, "netns-" + name);
        FutureTask<Void> joined = new FutureTask<>(() -> {
            join(name);
            return null;
        });
        t.tasks.add(joined);
        t.thread.start();
        try {
            joined.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            return t;
        } catch (ExecutionException e) {
            t.close();
            if (e.getCause() instanceof IOException io) throw io;
            throw new IOException("could not join network namespace " + name, e.getCause());
        } catch (InterruptedException e) {
            t.close();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while joining network namespace " + name, e);
        } catch (TimeoutException e) {
            t.close();
            throw new IOException("timed out joining network namespace " + name, e);
        }
    }

    private static void join(String name) throws IOException {
        LibC libc = LibC.Holder.LIBC;
        String path = "/run/netns/" + name;
        int fd = libc.open(path, LibC.O_RDONLY | LibC.O_CLOEXEC);
        if (fd < 0) throw new IOException("open " + path + ": " + LibC.Holder.describe(LibC.Holder.errno()));
        try {
            if (libc.setns(fd, LibC.CLONE_NEWNET) != 0) {
                throw new IOException("setns " + path + ": " + LibC.Holder.describe(LibC.Holder.errno()));
            }
        } finally {
            libc.close(fd);
        }
    }

    private void loop() {
        // A namespace thread's first task is the join (start); a host thread has none.
        boolean joining = namespace.name().isPresent();
        while (true) {
            FutureTask<?> task;
            try {
                task = tasks.take();
            } catch (InterruptedException e) {
                break;
            }
            if (task == POISON) break;
            task.run(); // FutureTask catches everything the task throws: this thread never dies mid-queue
            if (joining) {
                joining = false;
                if (isFailed(task)) break; // setns failed: run nothing else, in the wrong namespace least of all
            }
        }
        // Whatever is left was queued behind a failed start or an interrupt: fail it rather than hang its caller.
        synchronized (lock) { closed = true; }
        for (FutureTask<?> t; (t = tasks.poll()) != null; ) t.cancel(false);
    }

    private static boolean isFailed(FutureTask<?> t) {
        try {
            t.get();
            return false;
        } catch (Exception e) {
            return true;
        }
    }

    private static final FutureTask<Void> POISON = new FutureTask<>(() -> null);

    /** The namespace this thread runs in. */
    public NetworkNamespace namespace() { return namespace; }

    /**
     * Runs {@code task} on this thread and waits for it. Exceptions the task throws reach the caller unchanged
     * (the stack trace is the namespace thread's).
     */
    public <T> T call(Callable<T> task) throws Exception {
        if (Thread.currentThread() == thread) return task.call();
        FutureTask<T> f = new FutureTask<>(task);
        synchronized (lock) {
            if (closed) throw new IllegalStateException("thread " + thread.getName() + " is closed");
            tasks.add(f);
        }
        try {
            return f.get();
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof Exception ex) throw ex;
            if (c instanceof Error err) throw err;
            throw e;
        } catch (java.util.concurrent.CancellationException e) {
            throw new IllegalStateException("thread " + thread.getName() + " stopped before running the task", e);
        }
    }

    /** Stops the thread after the tasks already queued; waits a bounded time for it to end. */
    @Override public void close() {
        synchronized (lock) {
            if (closed) return;
            closed = true;
            tasks.add(POISON);
        }
        if (Thread.currentThread() == thread) return;
        try {
            thread.join(JOIN_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
