package io.nftproxy.it.daemon;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The threads of a daemon process by name (issue 27), and the launcher's JVM flags to start one with, so that a test
 * counts the threads production runs.
 *
 * <p>The target is 12; on HotSpot 17 the JVM alone runs 11 with the launcher's flags (two launcher threads,
 * VM thread, periodic task, signal dispatcher, service thread, reference handler, finalizer, monitor deflation, common
 * cleaner, one C1 compiler), so the budgets are what the daemon runs today (docs/benchmarks.md, "Issue 27: the daemon's threads and heap").
 */
public final class DaemonThreads {
    private DaemonThreads() {}

    /** /proc/PID/task/N/comm with trailing digits folded ("C1 CompilerThre", "Cleaner-N"), and how many of each. */
    public static Map<String, Integer> byName(long pid) throws IOException {
        Map<String, Integer> byName = new TreeMap<>();
        String[] tasks = new File("/proc/" + pid + "/task").list();
        if (tasks == null || tasks.length == 0) throw new IOException("no /proc/" + pid + "/task: the daemon is gone");
        for (String tid : tasks) {
            try {
                String comm = Files.readString(Path.of("/proc", Long.toString(pid), "task", tid, "comm")).strip();
                byName.merge(comm.replaceAll("\\d+$", "N"), 1, Integer::sum);
            } catch (NoSuchFileException gone) {
                // A thread that ended between the listing and the read is not running.
            }
        }
        return byName;
    }

    public static int total(Map<String, Integer> byName) { return byName.values().stream().mapToInt(Integer::intValue).sum(); }

    /** A {@link DaemonProcess} wrapper: the JVM flags nftproxy-jvm.sh gives the daemon on this runtime, without CDS. */
    public static List<String> withLauncherFlags(List<String> java) {
        List<String> out = new ArrayList<>(java.subList(0, 1));
        out.addAll(launcherFlags(java.get(0)));
        out.addAll(java.subList(1, java.size()));
        return out;
    }

    private static List<String> launcherFlags(String javaBin) {
        try {
            Process p = new ProcessBuilder("sh", "-c", ". \"$0\"; NFTPROXY_NO_CDS=1 nftproxy_jvm_flags x run \"$1\"",
                    "../systemd/src/main/dist/nftproxy-jvm.sh", javaBin).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes()).strip();
            if (p.waitFor() != 0) throw new IllegalStateException("nftproxy_jvm_flags failed: " + out);
            return Arrays.asList(out.split("\\s+"));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
