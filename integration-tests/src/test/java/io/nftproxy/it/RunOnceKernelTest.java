package io.nftproxy.it;

import io.nftproxy.cli.ExitCodes;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.nft.TableContent;
import io.nftproxy.readback.KernelTableParser;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code nftproxy run --once} end to end on the shipped examples, in-process, with the nft client bound to a
 * throwaway namespace through the hidden {@code --netns} option (the build itself never enters a namespace).
 */
class RunOnceKernelTest {
    private static final Path EXAMPLES = Path.of("..", "examples");

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailable();
    }

    private static List<String> args(KernelNamespace ns, String... extra) {
        List<String> a = new ArrayList<>(List.of("run", "--once", "--manifests", EXAMPLES.toString(),
                "--hostname-override", "k8s-node-1", "--cluster-cidr", "172.20.0.0/16,fd00:172:20::/64", "--netns", ns.name()));
        a.addAll(List.of(extra));
        return a;
    }

    private static CliRun run(List<String> args) { return CliRun.of(args); }

    @Test
    void appliesBothTablesThenAdoptsThemOnTheSecondRun() throws Exception {
        for (String mode : List.of("library", "exec")) {
            try (KernelNamespace ns = KernelNamespace.create("once")) {
                CliRun first = run(args(ns, "--nft-mode", mode));
                assertEquals(ExitCodes.OK, first.exit(), () -> mode + ": " + first.err());
                for (IpFamily f : IpFamily.values()) {
                    TableContent t = KernelTableParser.parse(ns.listTable(f));
                    assertTrue(t.ruleCount() > 10 && !t.elements("service-ips").isEmpty(), () -> mode + " " + f + ": " + t);
                    assertTrue(first.out().contains("applied table " + f.nftFamily() + " kube-proxy: converge sync"), first.out());
                }
                String before = ns.listTable(IpFamily.IPV4);
                CliRun second = run(args(ns, "--nft-mode", mode));
                assertEquals(ExitCodes.OK, second.exit(), second::err);
                assertTrue(second.out().contains("applied table ip kube-proxy: converge sync, 0 commands"), second.out());
                assertTrue(second.out().contains("applied table ip6 kube-proxy: converge sync, 0 commands"), second.out());
                assertEquals(before, ns.listTable(IpFamily.IPV4), "the second run changed the kernel's table");
            }
        }
    }

    /** Issue 10 row 15: with the option, an externalIP that is another Service's ClusterIP never reaches the kernel. */
    @Test
    void refuseExternalIpOverlapsKeepsAnotherServicesClusterIPOutOfTheKernel(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        java.nio.file.Files.writeString(dir.resolve("services.yaml"), """
                apiVersion: v1
                kind: Service
                metadata: {namespace: demo, name: victim}
                spec: {clusterIP: 10.96.0.10, ports: [{port: 53, protocol: TCP}]}
                ---
                apiVersion: v1
                kind: Service
                metadata: {namespace: demo, name: thief}
                spec: {clusterIP: 10.96.0.11, externalIPs: [10.96.0.10, 203.0.113.7], ports: [{port: 53, protocol: TCP}]}
                """);
        for (boolean refuse : List.of(false, true)) {
            try (KernelNamespace ns = KernelNamespace.create("once")) {
                List<String> a = new ArrayList<>(List.of("run", "--once", "--manifests", dir.toString(),
                        "--hostname-override", "k8s-node-1", "--netns", ns.name()));
                if (refuse) a.add("--refuse-external-ip-overlaps");
                CliRun r = run(a);
                assertEquals(ExitCodes.OK, r.exit(), r::err);
                String table = ns.nftOut("list", "table", "ip", "kube-proxy");
                assertTrue(table.contains("203.0.113.7 . tcp . 53 comment \"demo/thief\""), table);
                boolean stolen = table.contains("10.96.0.10 . tcp . 53 comment \"demo/thief\"");
                assertEquals(!refuse, stolen, (refuse ? "refused" : "kept with a warning") + ":\n" + table);
            }
        }
    }

    /** A set the kernel caps at one element (someone else's doing) makes the kernel refuse our elements. */
    @Test
    void aRefusedTransactionExitsFiveAndLeavesTheTableAsItWas() throws Exception {
        try (KernelNamespace ns = KernelNamespace.create("once")) {
            ns.load("add table ip kube-proxy { comment \"rules for kube-proxy\" ; }\n"
                    + "add set ip kube-proxy cluster-ips { type ipv4_addr ; comment \"Active ClusterIPs\" ; size 1 ; }\n");
            String before = ns.listTable(IpFamily.IPV4);
            CliRun r = run(args(ns));
            assertEquals(ExitCodes.SYNC_FAILED, r.exit(), r::err);
            assertTrue(r.err().contains("nftproxy: table ip kube-proxy not applied: kind=FAILED"), r.err());
            assertTrue(r.err().contains("Too many open files"), r.err()); // ENFILE: the set is full
            assertEquals(before, ns.listTable(IpFamily.IPV4), "a refused transaction changed the table");
            assertTrue(r.out().contains("applied table ip6 kube-proxy"), "the other family is independent: " + r.out());
        }
    }

    /**
     * Without CAP_NET_ADMIN (dropped from the bounding set of a child JVM, which keeps CAP_SYS_ADMIN to join the
     * namespace) nft says "Operation not permitted": exit 4 with a message that names the capability.
     */
    @Test
    void withoutNetAdminItExitsFour() throws Exception {
        String setpriv = CliRun.setpriv().orElse(null);
        Assumptions.assumeTrue(setpriv != null, "setpriv (util-linux) is not installed");
        try (KernelNamespace ns = KernelNamespace.create("once")) {
            CliRun r = CliRun.withoutNetAdmin(setpriv, args(ns));
            assertEquals(ExitCodes.PERMISSION_DENIED, r.exit(), () -> r.out() + r.err());
            assertTrue(r.err().contains("permission denied") && r.err().contains("CAP_NET_ADMIN"), r.err());
            assertTrue(ns.nftOut("list", "tables").isBlank(), "nothing was created");
        }
    }

    @Test
    void aNamespaceThatDoesNotExistExitsThree() {
        CliRun r = run(List.of("run", "--once", "--manifests", EXAMPLES.toString(), "--hostname-override", "k8s-node-1",
                "--netns", "nftp-missing-" + ProcessHandle.current().pid(), "--nft-mode", "library"));
        assertEquals(ExitCodes.NFT_UNAVAILABLE, r.exit(), r::err);
        assertTrue(r.err().contains("cannot open nft in netns"), r.err());
        assertTrue(new File("/run/netns/nftp-missing-" + ProcessHandle.current().pid()).exists() == false);
    }

    /**
     * As the daemon after a sync: a UDP flow to kube-dns's ClusterIP whose DNAT points at a pod that is no endpoint
     * (a client with a fixed source port would keep it as long as it keeps sending) is deleted; the flow to the live
     * endpoint, and a TCP flow to the dead pod, stay.
     */
    @Test
    void aStaleUdpFlowIsDeletedAfterTheSync() throws Exception {
        String conntrack = KernelNamespace.executable("conntrack").orElse(null);
        Assumptions.assumeTrue(conntrack != null, "the conntrack command is not installed");
        try (KernelNamespace ns = KernelNamespace.create("once")) {
            insert(ns, conntrack, "udp", 40010, "172.20.235.250", "");   // the pod is gone
            insert(ns, conntrack, "udp", 40011, "172.20.235.193", "");   // kube-dns's endpoint
            insert(ns, conntrack, "tcp", 40012, "172.20.235.250", "ESTABLISHED");
            CliRun r = run(args(ns));
            assertEquals(ExitCodes.OK, r.exit(), r::err);
            assertTrue(r.out().contains("conntrack: deleted 1 of 1 stale UDP entries"), r.out());
            String left = ns.exec(Duration.ofSeconds(10), null, conntrack, "-L").stdout();
            assertTrue(!left.contains("sport=40010 "), left);
            assertTrue(left.contains("sport=40011 ") && left.contains("sport=40012 "), left);
        }
    }

    /** A pod's flow to kube-dns (10.96.0.10:53), DNATed to {@code backend}. */
    private static void insert(KernelNamespace ns, String conntrack, String proto, int sport, String backend, String tcpState)
            throws IOException {
        List<String> a = new ArrayList<>(List.of(conntrack, "-I", "-p", proto, "-s", "172.20.211.9", "-d", "10.96.0.10",
                "--sport", String.valueOf(sport), "--dport", "53", "-r", backend, "-q", "172.20.211.9",
                "--reply-port-src", "53", "--reply-port-dst", String.valueOf(sport), "-t", "120"));
        if (!tcpState.isEmpty()) a.addAll(List.of("--state", tcpState));
        KernelNamespace.Result r = ns.exec(Duration.ofSeconds(10), null, a.toArray(String[]::new));
        assertTrue(r.ok(), () -> String.join(" ", a) + ": " + r.stderr());
    }

    /** kube-proxy's --cleanup: {@code nftproxy cleanup --all}, both tables and (here none) the other modes' leftovers. */
    @Test
    void cleanupFlagDeletesBothTables() throws Exception {
        try (KernelNamespace ns = KernelNamespace.create("once")) {
            assertEquals(ExitCodes.OK, run(args(ns)).exit());
            CliRun r = run(List.of("run", "--cleanup", "--netns", ns.name()));
            assertEquals(ExitCodes.OK, r.exit(), r::err);
            assertEquals("deleted table ip kube-proxy\ndeleted table ip6 kube-proxy\n"
                    + "kube-proxy's iptables/IPVS-mode leftovers: none, nothing to delete\n", r.out());
            assertTrue(ns.nftOut("list", "tables").isBlank(), ns.nftOut("list", "tables"));
        }
    }
}
