package io.nftproxy.it.release;

import io.nftproxy.netlink.KernelNamespace;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A Debian system booted by {@code systemd-nspawn --boot}, systemd as its PID 1, inside a network namespace the test
 * created (never the host's): the root filesystem is read-only underneath and every write goes to a tmpfs overlay
 * ({@code --volatile=overlay}), so the cached root is never changed. Driven without machinectl (this host has no
 * systemd of its own): commands run in all of the container's namespaces through {@code nsenter -t PID1 -a}.
 * {@link #close()} powers it off and removes what nspawn leaves behind on a host whose /run is not a tmpfs.
 */
final class NspawnMachine implements AutoCloseable {
    private static final Duration BOOT = Duration.ofSeconds(60);
    private static final Path CGROUP = Path.of("/sys/fs/cgroup");

    private final String name;
    private final Process nspawn;
    private final Path log;
    private final long pid1;

    private NspawnMachine(String name, Process nspawn, Path log, long pid1) {
        this.name = name;
        this.nspawn = nspawn;
        this.log = log;
        this.pid1 = pid1;
    }

    /** Why no machine can be booted here, if so. */
    static Optional<String> unavailabilityCause() {
        if (!KernelNamespace.isRoot()) return Optional.of("needs root to boot a container");
        if (KernelNamespace.executable("systemd-nspawn").isEmpty()) {
            return Optional.of("systemd-nspawn is not installed (apt-get install systemd-container)");
        }
        if (KernelNamespace.executable("nsenter").isEmpty()) return Optional.of("nsenter (util-linux) is not installed");
        return Optional.empty();
    }

    /**
     * Boots {@code root} in {@code netns}, {@code binds} as {@code --bind-ro=HOST:CONTAINER} pairs, and waits until
     * systemd says the system is running. nspawn's own output goes to {@code log}.
     */
    static NspawnMachine boot(Path root, KernelNamespace netns, String name, List<String> binds, Path log) throws Exception {
        List<String> argv = new ArrayList<>(List.of(KernelNamespace.executable("systemd-nspawn").orElseThrow(),
                "-D", root.toString(), "--volatile=overlay", "--boot",
                "--network-namespace-path=/run/netns/" + netns.name(),
                // No machined and no host systemd to register with or to ask for a scope (see the reference notes).
                "--register=no", "--keep-unit",
                // Not given by default when the network namespace is passed in.
                "--capability=CAP_NET_ADMIN",
                "--console=passive", "-M", name));
        for (String b : binds) argv.add("--bind-ro=" + b);
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(log.toFile())
                .redirectInput(new File("/dev/null"));
        // nspawn mounts /proc/sys read-only even for the container's root; on a node root writes /proc/sys/net, and
        // the unit's privileged pre-start sets the conntrack sysctls there (the container's network namespace is the
        // test's own, so nothing of the host's is written).
        pb.environment().put("SYSTEMD_NSPAWN_API_VFS_WRITABLE", "network");
        Process p = pb.start();
        long deadline = System.nanoTime() + BOOT.toNanos();
        long pid1 = -1;
        try {
            while (pid1 < 0) {
                if (!p.isAlive()) throw new IOException("systemd-nspawn exited " + p.exitValue() + ": " + Files.readString(log));
                if (System.nanoTime() > deadline) throw new IOException("no systemd in the container after " + BOOT + ": " + Files.readString(log));
                KernelNamespace.Result child = KernelNamespace.run(Duration.ofSeconds(10), null,
                        KernelNamespace.executable("pgrep").orElse("pgrep"), "-x", "-P", String.valueOf(p.pid()), "systemd");
                pid1 = child.ok() ? Long.parseLong(child.stdout().strip().lines().findFirst().orElse("-1")) : -1;
                if (pid1 < 0) Thread.sleep(50);
            }
            NspawnMachine m = new NspawnMachine(name, p, log, pid1);
            String state = "";
            while (!state.equals("running") && !state.equals("degraded")) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("systemd did not finish booting in " + BOOT + " (is-system-running: " + state + ")\n"
                            + m.exec("systemctl", "--failed", "--no-pager").stdout() + Files.readString(log));
                }
                Thread.sleep(100);
                // Before its bus is up systemctl says "Failed to connect to bus"; that is booting too.
                state = m.exec("systemctl", "is-system-running").stdout().strip();
            }
            return m;
        } catch (Exception e) {
            p.destroyForcibly();
            p.waitFor();
            removeLeftovers(name);
            throw e;
        }
    }

    /** Runs {@code command} inside the container (all of its namespaces) and waits at most 60 s. */
    KernelNamespace.Result exec(String... command) throws IOException { return execWithInput(null, command); }

    KernelNamespace.Result execWithInput(String stdin, String... command) throws IOException {
        List<String> argv = new ArrayList<>(List.of(KernelNamespace.executable("nsenter").orElseThrow(),
                "-t", String.valueOf(pid1), "-a"));
        argv.addAll(List.of(command));
        return KernelNamespace.run(Duration.ofSeconds(60), stdin, argv.toArray(String[]::new));
    }

    /** {@code command}'s stdout; a non-zero exit fails with what it said. */
    String ok(String... command) throws IOException {
        KernelNamespace.Result r = exec(command);
        if (!r.ok()) throw new IOException(String.join(" ", command) + " exited " + r.exitCode() + ": " + r.stderr() + r.stdout());
        return r.stdout();
    }

    /** One property of a unit, as {@code systemctl show -p NAME --value} gives it. */
    String property(String unit, String property) throws IOException {
        return ok("systemctl", "show", "-p", property, "--value", unit).strip();
    }

    /** Powers the container off (nspawn exits 0), else kills nspawn; then removes its leftovers on the host. */
    @Override public void close() throws IOException {
        try {
            if (nspawn.isAlive()) {
                try {
                    exec("systemctl", "poweroff");
                } catch (IOException e) {
                    // poweroff may cut the nsenter short; the wait below decides
                }
                if (!nspawn.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                    nspawn.destroyForcibly();
                    nspawn.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            nspawn.destroyForcibly();
        } finally {
            removeLeftovers(name);
        }
    }

    /** What nspawn's log said, for failure messages. */
    String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /**
     * nspawn makes payload/, payload/init.scope/ and supervisor/ right under each named hierarchy it uses, and leaves
     * /run/systemd/nspawn/propagate/NAME (this host's /run is not a tmpfs). Only empty cgroups are removed.
     */
    private static void removeLeftovers(String name) throws IOException {
        for (String hierarchy : List.of("systemd", "unified")) {
            for (String dir : List.of("payload/init.scope", "payload", "supervisor")) {
                Path p = CGROUP.resolve(hierarchy).resolve(dir);
                if (Files.isDirectory(p)) {
                    try {
                        Files.delete(p);
                    } catch (IOException busy) {
                        // still has processes or children: not ours to force
                    }
                }
            }
        }
        Path propagate = Path.of("/run/systemd/nspawn/propagate", name);
        if (Files.isDirectory(propagate)) {
            try (var s = Files.walk(propagate)) {
                for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
            }
        }
    }
}
