package io.nftproxy.it.daemon;

import io.nftproxy.netlink.KernelNamespace;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * {@code nftproxy run} as a child JVM inside a test's network namespace ({@code ip netns exec}), so it has a process
 * of its own: its own descriptor limit, its own PATH, its own log. Closing it kills it.
 */
public final class DaemonProcess implements AutoCloseable {
    private final Process process;
    private final Path log;

    private DaemonProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /**
     * Starts {@code nftproxy run ARGS} in {@code ns}, wrapped by {@code wrap} (a {@code prlimit} in front, say), with
     * {@code env} added to the environment.
     */
    public static DaemonProcess start(KernelNamespace ns, UnaryOperator<List<String>> wrap, Map<String, String> env, String... args)
            throws IOException {
        List<String> run = new ArrayList<>(List.of("run"));
        run.addAll(List.of(args));
        return launch(ns, wrap, env, run);
    }

    /**
     * Starts {@code nftproxy ARGS} with no command in {@code ns}, as kube-proxy is invoked: a kube-proxy command
     * line (kubeadm's DaemonSet's) with the binary swapped.
     */
    public static DaemonProcess startWithoutCommand(KernelNamespace ns, String... args) throws IOException {
        return launch(ns, UnaryOperator.identity(), Map.of(), List.of(args));
    }

    private static DaemonProcess launch(KernelNamespace ns, UnaryOperator<List<String>> wrap, Map<String, String> env,
                                        List<String> args) throws IOException {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> java = new ArrayList<>(List.of(javaBin, "-Dlog4j2.configurationFile=log4j2.xml", "-cp",
                System.getProperty("java.class.path"), "io.nftproxy.cli.Main"));
        java.addAll(args);
        List<String> argv = new ArrayList<>(List.of("ip", "netns", "exec", ns.name()));
        argv.addAll(wrap.apply(java));
        Path log = Files.createTempFile("nftp-daemon-", ".log");
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().putAll(env);
        return new DaemonProcess(pb.start(), log);
    }

    /** The daemon's own pid: {@code ip netns exec} and {@code prlimit} exec rather than fork. */
    public long pid() { return process.pid(); }

    public boolean alive() { return process.isAlive(); }

    /** Waits for the daemon to end; its exit code (137 after SIGKILL), or -1 when it still runs after {@code limit}. */
    public int awaitExit(Duration limit) throws InterruptedException {
        return process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : -1;
    }

    public String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return e.toString();
        }
    }

    /** Waits until the log contains {@code needle}; false when the time is up or the process ended first. */
    public boolean awaitLog(String needle, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < deadline) {
            if (log().contains(needle)) return true;
            if (!process.isAlive()) return log().contains(needle);
            Thread.sleep(50);
        }
        return false;
    }

    /** Descriptors the daemon has open now. */
    public int openDescriptors() {
        String[] fds = new File("/proc/" + process.pid() + "/fd").list();
        return fds == null ? -1 : fds.length;
    }

    @Override public void close() throws IOException {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(log);
    }
}
