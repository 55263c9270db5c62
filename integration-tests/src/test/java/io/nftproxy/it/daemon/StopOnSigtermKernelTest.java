package io.nftproxy.it.daemon;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code nftproxy run} as the process systemd runs: started in a namespace of its own with the shipped logging
 * configuration and kubeadm's KubeProxyConfiguration as it is, stopped by SIGTERM. It logs one start line and one stop line at the default verbosity, exits 0 (so
 * {@code systemctl stop} leaves the unit inactive, not failed) and leaves its rules in the kernel.
 */
class StopOnSigtermKernelTest {
    /** The config.conf kubeadm v1.36 writes for kube-proxy, unchanged (see ConfigFileTest); flags as its DaemonSet's. */
    private static final String KUBEADM_CONFIG = "../proxy-daemon/src/test/resources/kubeadm-v1.36-kube-proxy-config.conf";

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailable();
    }

    private static String read(Path p) {
        try {
            return java.nio.file.Files.readString(p);
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }

    /** The daemon's log, from start to its exit after SIGTERM once the first sync is done, and its exit code. */
    private record Run(List<String> lines, int exit) {}

    private static Run runUntilFirstSyncThenTerm(KernelNamespace ns, String... args) throws Exception {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path log = java.nio.file.Files.createTempFile("nftp-term-", ".log");
        List<String> command = new java.util.ArrayList<>(List.of("ip", "netns", "exec", ns.name(), javaBin,
                "-Dlog4j2.configurationFile=log4j2.xml", "-cp", System.getProperty("java.class.path"), "io.nftproxy.cli.Main", "run"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!java.nio.file.Files.readString(log).contains("first sync done") && p.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertTrue(java.nio.file.Files.readString(log).contains("first sync done"), () -> read(log));
            p.destroy(); // SIGTERM
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "still running 30 s after SIGTERM");
            return new Run(java.nio.file.Files.readAllLines(log), p.exitValue());
        } finally {
            p.destroyForcibly();
            java.nio.file.Files.deleteIfExists(log);
        }
    }

    @Test
    void sigtermStopsWithExitZeroAndLeavesTheRules() throws Exception {
        try (KernelNamespace ns = KernelNamespace.create("term")) {
            Run r = runUntilFirstSyncThenTerm(ns, "--config", KUBEADM_CONFIG,
                    "--manifests", "../examples", "--hostname-override", "k8s-node-1", "--cluster-cidr", "172.20.0.0/16");
            List<String> lines = r.lines();
            assertEquals(0, r.exit(), () -> String.join("\n", lines));
            assertEquals(1, lines.stream().filter(l -> l.contains("msg=\"started version=")).count(), () -> String.join("\n", lines));
            assertTrue(lines.get(lines.size() - 1).contains("msg=\"stopped; nftables rules left in place\""), () -> String.join("\n", lines));
            assertTrue(lines.stream().allMatch(l -> l.startsWith("time=")), () -> "a line that is not the daemon's logfmt:\n" + String.join("\n", lines));
            String table = ns.listTable(IpFamily.IPV4);
            assertTrue(table.contains("services"), () -> "the rules were removed at stop: " + table);
        }
    }

    /** issue 24/26: the table layout set in the config file is the one the daemon writes and names in its start line. */
    @Test
    void theLayoutOfTheConfigFileIsWrittenAndLogged() throws Exception {
        Path config = java.nio.file.Files.createTempFile("nftp-layout-", ".yaml");
        try (KernelNamespace ns = KernelNamespace.create("layout")) {
            java.nio.file.Files.writeString(config, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                    + "nftproxy:\n  tableLayout: fast\n");
            Run r = runUntilFirstSyncThenTerm(ns, "--config", config.toString(),
                    "--manifests", "../examples", "--hostname-override", "k8s-node-1", "--cluster-cidr", "172.20.0.0/16");
            assertTrue(r.lines().stream().anyMatch(l -> l.contains("msg=\"started version=") && l.contains(" layout=fast ")),
                    () -> String.join("\n", r.lines()));
            assertTrue(ns.listTableText(IpFamily.IPV4).contains("chain service-VSI2YVQZ-demo/hello/tcp/http {"),
                    "fast gives demo/hello its chain");
        } finally {
            java.nio.file.Files.deleteIfExists(config);
        }
    }
}
