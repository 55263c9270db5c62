package io.nftproxy.it.release;

import io.nftproxy.netlink.KernelNamespace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A containerd of a test's own, as the node's kubelet would use it but with nothing of the host's: root, state and
 * socket in the test's directory, the CRI plugin off, in a mount namespace of its own; its containers get a network
 * namespace of their own unless told to join one. {@link #close()} stops it and removes runc's cgroups of the
 * containerd namespace it used ({@code /NAMESPACE/ID} in each hierarchy).
 */
public final class TestContainerd implements AutoCloseable {
    private final Process daemon;
    private final Path log;
    private final String ctr;
    private final String sock;
    private final String namespace;

    private TestContainerd(Process daemon, Path log, String ctr, String sock, String namespace) {
        this.daemon = daemon;
        this.log = log;
        this.ctr = ctr;
        this.sock = sock;
        this.namespace = namespace;
    }

    /** Why no containerd can be started here, or empty. */
    public static Optional<String> unavailabilityCause() {
        if (!KernelNamespace.isRoot()) return Optional.of("needs root");
        return Stream.of("containerd", "ctr", "runc", "unshare").filter(c -> KernelNamespace.executable(c).isEmpty())
                .findFirst().map(c -> "the " + c + " command is not installed");
    }

    /** Starts containerd with its files in {@code dir}; its containers live in containerd namespace {@code namespace}. */
    public static TestContainerd start(Path dir, String namespace) throws Exception {
        Files.createDirectories(dir);
        String sock = dir.resolve("sock").toString();
        Path config = Files.writeString(dir.resolve("config.toml"), "version = 2\n"
                + "root = \"" + dir.resolve("root") + "\"\nstate = \"" + dir.resolve("state") + "\"\n"
                + "disabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n"
                + "[grpc]\n  address = \"" + sock + "\"\n[ttrpc]\n  address = \"" + sock + ".ttrpc\"\n");
        Path log = dir.resolve("containerd.log");
        Process p = new ProcessBuilder(KernelNamespace.executable("unshare").orElseThrow(), "--mount", "--propagation", "private",
                KernelNamespace.executable("containerd").orElseThrow(), "--config", config.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        TestContainerd c = new TestContainerd(p, log, KernelNamespace.executable("ctr").orElseThrow(), sock, namespace);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (ReleaseTarball.run(c.ctr("version"), Map.of(), dir, 10).exit() != 0) {
            if (!p.isAlive() || System.nanoTime() > deadline) {
                c.close();
                throw new AssertionError("containerd did not start: " + Files.readString(log));
            }
            Thread.sleep(200);
        }
        return c;
    }

    /** The ctr command line for {@code args}, against this containerd and namespace. */
    public List<String> ctr(String... args) {
        List<String> argv = new ArrayList<>(List.of(ctr, "-a", sock, "-n", namespace));
        argv.addAll(List.of(args));
        return argv;
    }

    public String log() throws IOException { return Files.readString(log); }

    @Override
    public void close() throws Exception {
        daemon.destroy();
        if (!daemon.waitFor(20, TimeUnit.SECONDS)) daemon.destroyForcibly().waitFor();
        try (Stream<Path> hierarchies = Files.list(Path.of("/sys/fs/cgroup"))) {
            for (Path h : hierarchies.toList()) {
                Path mine = Files.isDirectory(h.resolve(namespace)) ? h.resolve(namespace)
                        : h.getFileName().toString().equals(namespace) ? h : null;
                if (mine == null) continue;
                try (Stream<Path> w = Files.walk(mine)) {
                    for (Path d : w.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(d);
                }
            }
        }
    }
}
