package io.nftproxy.it;

import io.nftproxy.netlink.KernelTests;
import io.nftproxy.it.daemon.DaemonProcess;

import io.nftproxy.cli.ExitCodes;
import io.nftproxy.netlink.KernelNamespace;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code nftproxy run --init-only} sets kube-proxy's conntrack sysctls in a network namespace this test creates
 * (in-process, through the hidden {@code --netns}). Only sysctls the kernel offers writable inside that namespace
 * are per-namespace and are checked by value; nf_conntrack_max and the hash size are host-wide (read-only in a
 * namespace here) and never written by this test: it checks that they were left alone, and the host's values are
 * compared before and after.
 */
class ConntrackSysctlsKernelTest {
    private static final String DIR = "/proc/sys/net/netfilter/";
    /** What the flags below ask for, in the kernel's seconds. */
    private static final Map<String, String> WANTED = new LinkedHashMap<>(Map.of(
            "nf_conntrack_tcp_timeout_established", "7200",
            "nf_conntrack_tcp_timeout_close_wait", "420",
            "nf_conntrack_tcp_be_liberal", "1",
            "nf_conntrack_udp_timeout", "45",
            "nf_conntrack_udp_timeout_stream", "180"));

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailableAnd(KernelTests.causeIf(!Files.exists(Path.of(DIR + "nf_conntrack_max")), "nf_conntrack is not loaded"));
    }

    @Test
    void initOnlySetsThePerNamespaceSysctlsAndLeavesTheHostWideOnesAlone() throws Exception {
        Map<String, String> hostBefore = read(null);
        try (KernelNamespace ns = KernelNamespace.create("ctsys"); KernelNamespace other = KernelNamespace.create("ctsys")) {
            boolean maxWritableInNamespace = writable(ns, "nf_conntrack_max");
            // On a kernel that lets a namespace write nf_conntrack_max it would be the host's limit: then leave it out.
            List<String> maxFlag = maxWritableInNamespace ? List.of("--conntrack-max-per-core=0") : List.of();
            if (maxWritableInNamespace) System.out.println("ConntrackSysctlsKernelTest: nf_conntrack_max is writable in a namespace here; not tested");
            for (String s : WANTED.keySet()) {
                Assumptions.assumeTrue(writable(ns, s), s + " is not writable in a network namespace on this kernel");
            }
            List<String> args = new java.util.ArrayList<>(List.of("run", "--init-only", "--hostname-override", "k8s-node-1",
                    "--netns", ns.name(), "--conntrack-tcp-timeout-established=2h", "--conntrack-tcp-timeout-close-wait=7m",
                    "--conntrack-tcp-be-liberal", "--conntrack-udp-timeout=45s", "--conntrack-udp-timeout-stream=3m0s"));
            args.addAll(maxFlag);
            CliRun r = CliRun.of(args);
            assertEquals(ExitCodes.OK, r.exit(), r::err);
            Map<String, String> inNs = read(ns);
            for (Map.Entry<String, String> e : WANTED.entrySet()) assertEquals(e.getValue(), inNs.get(e.getKey()), e.getKey());
            if (!maxWritableInNamespace) {
                assertTrue(r.out().contains("nf_conntrack_max left at " + hostBefore.get("nf_conntrack_max"))
                        || r.out().contains("nf_conntrack_max=" + hostBefore.get("nf_conntrack_max") + " (already)"), r.out());
            }
            // Per namespace indeed: a fresh namespace still has the kernel's defaults, and the host kept its values.
            Map<String, String> fresh = read(other);
            assertNotEquals(WANTED.get("nf_conntrack_tcp_timeout_established"), fresh.get("nf_conntrack_tcp_timeout_established"));
            assertNotEquals(WANTED.get("nf_conntrack_udp_timeout"), fresh.get("nf_conntrack_udp_timeout"));
            assertEquals(hostBefore, read(null), "a sysctl of the host's own namespace changed");

            // Run again: everything is already set, nothing is written (the daemon's start after --init-only).
            CliRun again = CliRun.of(args);
            assertEquals(ExitCodes.OK, again.exit(), again::err);
            assertTrue(again.out().contains("nf_conntrack_tcp_timeout_established=7200 (already)"), again.out());
        }
    }

    /**
     * The daemon itself, started as systemd would (its own process in the namespace, kubeadm's file with its null
     * conntrack fields), sets kube-proxy's defaults before its first sync: 24h established, 1h close-wait.
     */
    @Test
    void theDaemonSetsKubeProxysDefaultsAtStart() throws Exception {
        Map<String, String> hostBefore = read(null);
        try (KernelNamespace ns = KernelNamespace.create("ctsys")) {
            Assumptions.assumeFalse(writable(ns, "nf_conntrack_max"), "nf_conntrack_max is writable in a namespace here: it would be the host's");
            String text;
            try (DaemonProcess d = DaemonProcess.start(ns, java -> java, Map.of(), "--config",
                    "../proxy-daemon/src/test/resources/kubeadm-v1.36-kube-proxy-config.conf",
                    "--manifests", "../examples", "--hostname-override", "k8s-node-1")) {
                boolean synced = d.awaitLog("first sync done", Duration.ofSeconds(60));
                text = d.log();
                assertTrue(synced, text);
                Map<String, String> inNs = read(ns);
                assertEquals("86400", inNs.get("nf_conntrack_tcp_timeout_established"), text);
                assertEquals("3600", inNs.get("nf_conntrack_tcp_timeout_close_wait"), text);
            }
            assertTrue(text.contains("level=WARN") && text.contains("nf_conntrack_max left at " + hostBefore.get("nf_conntrack_max"))
                    || text.contains("nf_conntrack_max=" + hostBefore.get("nf_conntrack_max")), text);
            assertEquals(hostBefore, read(null), "a sysctl of the host's own namespace changed");
        }
    }

    private static boolean writable(KernelNamespace ns, String name) throws IOException {
        KernelNamespace.Result r = ns.exec(Duration.ofSeconds(10), null, "stat", "-c", "%A", DIR + name);
        return r.ok() && r.stdout().strip().charAt(2) == 'w';
    }

    /** The values in {@code ns}, or in this process's namespace (read only) for null. */
    private static Map<String, String> read(KernelNamespace ns) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        List<String> names = new java.util.ArrayList<>(WANTED.keySet());
        names.add("nf_conntrack_max");
        for (String n : names) {
            if (ns == null) {
                out.put(n, io.nftproxy.node.ConntrackSysctls.readProcFile(Path.of(DIR + n)));
            } else {
                KernelNamespace.Result r = ns.exec(Duration.ofSeconds(10), null, "cat", DIR + n);
                assertTrue(r.ok(), r.stderr());
                out.put(n, r.stdout().strip());
            }
        }
        out.put("hashsize", io.nftproxy.node.ConntrackSysctls.readProcFile(Path.of("/sys/module/nf_conntrack/parameters/hashsize")));
        return out;
    }
}
