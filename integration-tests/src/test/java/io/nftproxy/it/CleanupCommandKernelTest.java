package io.nftproxy.it;

import io.nftproxy.cli.ExitCodes;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.KernelNamespace;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code nftproxy cleanup} deletes both kube-proxy tables and leaves every other table, rule and chain alone. */
class CleanupCommandKernelTest {
    private static final String OTHERS = "add table inet filter\n"
            + "add chain inet filter input { type filter hook input priority 0 ; policy accept ; }\n"
            + "add rule inet filter input tcp dport 22 accept\n"
            + "add table ip nat\n"
            + "add chain ip nat postrouting { type nat hook postrouting priority 100 ; }\n";
    private KernelNamespace ns;

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailable();
    }

    @BeforeEach
    void namespace() throws IOException {
        ns = KernelNamespace.create("clean");
        ns.load(OTHERS);
    }

    @AfterEach
    void delete() throws IOException {
        if (ns != null) ns.close();
    }

    @Test
    void deletesBothKubeProxyTablesAndNothingElse() throws Exception {
        CliRun rendered = CliRun.of("render", "--manifests", "../examples", "--hostname-override", "k8s-node-1");
        assertEquals(ExitCodes.OK, rendered.exit(), rendered::err);
        ns.load(rendered.out());
        String others = otherTables();
        assertEquals(List.of("table inet filter", "table ip kube-proxy", "table ip nat", "table ip6 kube-proxy"), tables());

        CliRun r = CliRun.of("cleanup", "--netns", ns.name());
        assertEquals(ExitCodes.OK, r.exit(), r::err);
        assertEquals("deleted table ip kube-proxy\ndeleted table ip6 kube-proxy\n", r.out());
        assertEquals(List.of("table inet filter", "table ip nat"), tables());
        assertEquals(others, otherTables(), "the other tables changed");
    }

    /**
     * A daemon holds the namespace's lock (the very lock nftproxy run takes at start): cleanup names it and deletes
     * nothing, since the daemon would write the tables again at once; --force deletes them with a warning.
     */
    @Test
    void whileADaemonRunsHereItRefusesUnlessForced() throws Exception {
        CliRun rendered = CliRun.of("render", "--manifests", "../examples", "--hostname-override", "k8s-node-1");
        ns.load(rendered.out());
        try (io.nftproxy.netlink.lock.NetnsLock daemon = io.nftproxy.netlink.lock.NetnsLock.acquire(ns.handle())) {
            CliRun r = CliRun.of("cleanup", "--netns", ns.name());
            assertEquals(ExitCodes.DAEMON_RUNNING, r.exit(), r::err);
            assertTrue(r.err().contains("not deleting: a daemon writes the tables of this network namespace (pid "
                    + ProcessHandle.current().pid()) && r.err().contains("--force"), r.err());
            assertEquals(List.of("table inet filter", "table ip kube-proxy", "table ip nat", "table ip6 kube-proxy"), tables());
            CliRun viaRun = CliRun.of("run", "--cleanup", "--hostname-override", "k8s-node-1", "--netns", ns.name());
            assertEquals(ExitCodes.DAEMON_RUNNING, viaRun.exit(), viaRun::err);

            CliRun forced = CliRun.of("cleanup", "--force", "--netns", ns.name());
            assertEquals(ExitCodes.OK, forced.exit(), forced::err);
            assertTrue(forced.err().contains("deleting them anyway (--force)"), forced.err());
            assertEquals(List.of("table inet filter", "table ip nat"), tables());
        }
        // Once the daemon is gone, no --force is needed.
        ns.load(rendered.out());
        assertEquals(ExitCodes.OK, CliRun.of("cleanup", "--netns", ns.name()).exit());
    }

    @Test
    void missingTablesAreFine() throws Exception {
        ns.load("add table ip6 kube-proxy\n");
        CliRun r = CliRun.of("cleanup", "--netns", ns.name());
        assertEquals(ExitCodes.OK, r.exit(), r::err);
        assertEquals("table ip kube-proxy: not present, nothing to delete\ndeleted table ip6 kube-proxy\n", r.out());
        CliRun again = CliRun.of("cleanup", "--netns", ns.name());
        assertEquals(ExitCodes.OK, again.exit(), again::err);
        assertTrue(again.out().contains("table ip6 kube-proxy: not present"), again.out());
        assertEquals(List.of("table inet filter", "table ip nat"), tables());
    }

    @Test
    void withoutNetAdminItExitsFourAndDeletesNothing() throws Exception {
        String setpriv = CliRun.setpriv().orElse(null);
        Assumptions.assumeTrue(setpriv != null, "setpriv (util-linux) is not installed");
        ns.load("add table ip kube-proxy\n");
        CliRun r = CliRun.withoutNetAdmin(setpriv, List.of("cleanup", "--netns", ns.name()));
        assertEquals(ExitCodes.PERMISSION_DENIED, r.exit(), () -> r.out() + r.err());
        assertTrue(r.err().contains("permission denied") && r.err().contains("CAP_NET_ADMIN"), r.err());
        assertTrue(tables().contains("table ip kube-proxy"), "the table was deleted all the same");
    }

    private List<String> tables() throws IOException {
        return ns.nftOut("list", "tables").lines().sorted().toList();
    }

    private String otherTables() throws IOException {
        return ns.nftOut("list", "table", "inet", "filter") + ns.nftOut("list", "table", "ip", "nat");
    }
}
