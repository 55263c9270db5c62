package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link NftClientContract} for a real client, in a throwaway namespace per test, and what only a kernel shows. */
abstract class NftClientKernelContract extends NftClientContract {
    /** A client bound to the namespace. */
    abstract NftClient client(KernelNamespace ns) throws Exception;

    @BeforeAll
    static void kernel() { KernelTests.assumeAvailable(); }

    @Override Session open() throws Exception {
        KernelNamespace ns = KernelNamespace.create("nl");
        NftClient client;
        try {
            client = client(ns);
        } catch (Exception | Error e) {
            ns.close();
            throw e;
        }
        return new Session() {
            @Override public NftClient client() { return client; }

            @Override public void close() throws Exception {
                try (ns; client) {
                    // closes the client, then deletes the namespace
                }
            }
        };
    }

    @Test
    void appliesACreatingTransactionInTheNamespaceOnly() throws Exception {
        String hostBefore = KernelNamespace.runChecked("nft", "list", "tables");
        TableContent table = TestTables.small(IpFamily.IPV4);
        try (KernelNamespace ns = KernelNamespace.create("nl"); NftClient client = client(ns)) {
            client.apply(Transaction.creating(table));
            assertTrue(ns.execChecked("nft", "list", "tables").contains("table ip kube-proxy"));
        }
        // Read-only check of the host: nothing we did is visible there.
        String hostAfter = KernelNamespace.runChecked("nft", "list", "tables");
        assertEquals(hostBefore, hostAfter, "host namespace tables changed");
        if (!hostBefore.contains("kube-proxy")) assertFalse(hostAfter.contains("kube-proxy"));
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
