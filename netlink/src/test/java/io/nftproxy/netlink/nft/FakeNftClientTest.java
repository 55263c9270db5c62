package io.nftproxy.netlink.nft;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.TableSpec;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.UnrecognisedRuleException;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FakeNftClientTest {
    private static final IpFamily V4 = IpFamily.IPV4;

    private static Transaction table() {
        return new Transaction(V4).add(new TableSpec(TableContent.TABLE_COMMENT)).add(Chain.regular("services"));
    }

    @Test
    void aRefusalIsClassifiedAsNftWouldReportItWithTheFailingLine() {
        FakeNftClient fake = new FakeNftClient();
        fake.apply(table());
        Transaction tx = new Transaction(V4).add(Chain.regular("a")).flush(Chain.regular("missing"));
        NftException e = assertThrows(NftException.class, () -> fake.apply(tx));
        assertEquals(NftException.Kind.NOT_FOUND, e.kind());
        assertEquals(2, e.lineNumber());
        assertEquals("flush chain ip kube-proxy missing", e.failingLine());
        assertNull(fake.dump(V4).chain("a"), "a refused transaction must change nothing");
    }

    @Test
    void anInjectedFailureChangesNothingAndCanBePermission() {
        FakeNftClient fake = new FakeNftClient().failWhen(tx -> true);
        NftException e = assertThrows(NftException.class, () -> fake.apply(table()));
        assertEquals(NftException.Kind.FAILED, e.kind());
        assertTrue(e.getMessage().contains(FakeNftClient.INJECTED_ERROR), e.getMessage());
        assertNull(fake.dump(V4));
        assertNull(fake.listTableJson(V4));
        fake.failWhen(tx -> true, "Operation not permitted");
        assertEquals(NftException.Kind.PERMISSION, assertThrows(NftException.class, () -> fake.apply(table())).kind());
        assertEquals(2, fake.failures());
    }

    @Test
    void aForeignRuleIsReportedUntilTheTableIsDeleted() throws Exception {
        FakeNftClient fake = new FakeNftClient();
        fake.apply(table());
        fake.addForeignRule(V4, "services", "{\"accept\":null}");
        UnrecognisedRuleException e = assertThrows(UnrecognisedRuleException.class, () -> fake.readTable(V4));
        assertEquals(1, e.items().size());
        fake.apply(new Transaction(V4).add(new TableSpec(TableContent.TABLE_COMMENT)).delete(new TableSpec(TableContent.TABLE_COMMENT)));
        assertNull(fake.readTable(V4));
    }

    @Test
    void seededRandomFailuresRepeat() {
        var a = FakeNftClient.randomly(42, 0.3);
        var b = FakeNftClient.randomly(42, 0.3);
        Transaction tx = table();
        int failed = 0;
        for (int i = 0; i < 200; i++) {
            boolean x = a.test(tx);
            assertEquals(x, b.test(tx));
            if (x) failed++;
        }
        assertTrue(failed > 30 && failed < 90, "about 30% expected, got " + failed);
    }
}
