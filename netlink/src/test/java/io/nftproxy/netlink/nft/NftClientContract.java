package io.nftproxy.netlink.nft;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Statement;
import io.nftproxy.nft.TableSpec;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Verdict;
import io.nftproxy.net.IpFamily;
import io.nftproxy.readback.KernelTableParser;
import io.nftproxy.readback.TableComparison;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What every {@link NftClient} must do: run against the fake ({@link FakeNftClientContractTest}) always, and against
 * a real kernel in a throwaway namespace per test ({@link NftClientKernelContract}) when the kernel-test gate allows.
 */
abstract class NftClientContract {
    /** A client on an empty ruleset of its own; closing the session releases the client and that ruleset. */
    interface Session extends AutoCloseable {
        NftClient client();

        @Override void close() throws Exception;
    }

    abstract Session open() throws Exception;

    @Test
    void listsACreatedTableAsTheKernelPrintsIt() throws Exception {
        TableContent table = TestTables.small(IpFamily.IPV4);
        try (Session s = open()) {
            NftClient client = s.client();
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
            List<String> diff = TableComparison.diff(table, KernelTableParser.parse(json),
                    Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED));
            assertTrue(diff.isEmpty(), () -> "the listing reads back as another table:\n" + String.join("\n", diff));
            assertNull(client.listTableJson(IpFamily.IPV6), "only the IPv4 table was created");
        }
    }

    @Test
    void aFailingTransactionLeavesTheTableExactlyAsBefore() throws Exception {
        try (Session s = open()) {
            NftClient client = s.client();
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
        try (Session s = open()) {
            s.client().apply(new Transaction(IpFamily.IPV4).add(new TableSpec(TableContent.TABLE_COMMENT)));
            NftException e = assertThrows(NftException.class,
                    () -> s.client().apply(new Transaction(IpFamily.IPV4).create(new TableSpec(TableContent.TABLE_COMMENT))));
            assertEquals(NftException.Kind.EXISTS, e.kind(), e.getMessage());
        }
    }

    @Test
    void deleteOfAMissingTableIsNotFound() throws Exception {
        try (Session s = open()) {
            NftException e = assertThrows(NftException.class,
                    () -> s.client().apply(new Transaction(IpFamily.IPV6).delete(new TableSpec(TableContent.TABLE_COMMENT))));
            assertEquals(NftException.Kind.NOT_FOUND, e.kind(), e.getMessage());
        }
    }
}
