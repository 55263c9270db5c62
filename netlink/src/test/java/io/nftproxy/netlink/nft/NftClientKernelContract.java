package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.nft.Chain;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Statement;
import io.nftproxy.nft.TableSpec;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Verdict;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What every real {@link NftClient} must do against a kernel, run in a throwaway namespace per test. */
abstract class NftClientKernelContract {
    /** A client bound to the namespace. */
    abstract NftClient client(KernelNamespace ns) throws Exception;

    @BeforeAll
    static void kernel() { KernelTests.assumeAvailable(); }

    @Test
    void appliesACreatingTransactionInTheNamespaceOnly() throws Exception {
        String hostBefore = KernelNamespace.runChecked("nft", "list", "tables");
        TableContent table = TestTables.small(IpFamily.IPV4);
        try (KernelNamespace ns = KernelNamespace.create("nl"); NftClient client = client(ns)) {
            assertNull(client.listTableJson(IpFamily.IPV4), "no table yet");
            client.apply(Transaction.creating(table));

            String json = client.listTableJson(IpFamily.IPV4);
            assertNotNull(json);
            assertTrue(json.contains("\"metainfo\""), json);
            for (String chain : table.chains().keySet()) {
                assertTrue(json.contains("\"name\": \"" + chain + "\""), "chain " + chain + " in " + json);
            }
            for (String set : table.sets().keySet()) {
                assertTrue(json.contains("\"name\": \"" + set + "\""), "set " + set);
            }
            assertTrue(ns.execChecked("nft", "list", "tables").contains("table ip kube-proxy"));
            assertNull(client.listTableJson(IpFamily.IPV6), "only the IPv4 table was created");
        }
        // Read-only check of the host: nothing we did is visible there.
        String hostAfter = KernelNamespace.runChecked("nft", "list", "tables");
        assertEquals(hostBefore, hostAfter, "host namespace tables changed");
        if (!hostBefore.contains("kube-proxy")) assertFalse(hostAfter.contains("kube-proxy"));
    }

    @Test
    void aFailingTransactionLeavesTheTableExactlyAsBefore() throws Exception {
        try (KernelNamespace ns = KernelNamespace.create("nl"); NftClient client = client(ns)) {
            client.apply(Transaction.creating(TestTables.small(IpFamily.IPV4)));
            String before = client.listTableJson(IpFamily.IPV4);

            Rule accept = new Rule("extra-chain", List.of(), List.of(new Statement.Decide(new Verdict.Accept())), null);
            Rule dangling = new Rule("services", List.of(), List.of(new Statement.Decide(new Verdict.Jump("no-such-chain"))), null);
            Transaction tx = new Transaction(IpFamily.IPV4)
                    .add(Chain.regular("extra-chain"))
                    .add(accept)
                    .add(dangling);
            NftException e = assertThrows(NftException.class, () -> client.apply(tx));

            assertEquals(NftException.Kind.NOT_FOUND, e.kind(), e.getMessage());
            assertTrue(e.isNotFound());
            assertNotNull(e.failingLine(), e.errorText());
            assertTrue(e.failingLine().contains("no-such-chain"), e.failingLine());
            assertTrue(e.getMessage().contains("apply 3 commands to ip kube-proxy"), e.getMessage());
            assertEquals(before, client.listTableJson(IpFamily.IPV4), "the valid commands before the failure were not kept");
        }
    }

    @Test
    void createOfAnExistingTableIsExists() throws Exception {
        try (KernelNamespace ns = KernelNamespace.create("nl"); NftClient client = client(ns)) {
            client.apply(new Transaction(IpFamily.IPV4).add(new TableSpec(TableContent.TABLE_COMMENT)));
            NftException e = assertThrows(NftException.class,
                    () -> client.apply(new Transaction(IpFamily.IPV4).create(new TableSpec(TableContent.TABLE_COMMENT))));
            assertEquals(NftException.Kind.EXISTS, e.kind(), e.getMessage());
        }
    }

    @Test
    void deleteOfAMissingTableIsNotFound() throws Exception {
        try (KernelNamespace ns = KernelNamespace.create("nl"); NftClient client = client(ns)) {
            NftException e = assertThrows(NftException.class,
                    () -> client.apply(new Transaction(IpFamily.IPV6).delete(new TableSpec(TableContent.TABLE_COMMENT))));
            assertEquals(NftException.Kind.NOT_FOUND, e.kind(), e.getMessage());
        }
    }

    @Test
    void capabilitiesMatchTheInstalledNft() throws Exception {
        String cli = KernelNamespace.runChecked("nft", "--version");
        try (KernelNamespace ns = KernelNamespace.create("nl"); NftClient client = client(ns)) {
            Capabilities caps = client.capabilities();
            System.out.println(client.describe() + ": " + caps);
            assertTrue(cli.contains("v" + caps.nftVersion() + " "), cli + " vs " + caps);
            if (caps.nftVersion().equals("1.0.6")) {
                assertFalse(caps.symbolicOutputPriority(), "nft 1.0.6 refuses priority dstnat on the output hook");
                assertTrue(caps.elementComments());
            }
            assertTrue(client.describe().contains(caps.nftVersion()), client.describe());
            assertEquals("", ns.execChecked("nft", "list", "ruleset"), "the probe is a dry run and leaves nothing behind");
        }
    }
}
