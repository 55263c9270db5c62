package io.nftproxy.sync;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.Protocol;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Value;
import io.nftproxy.service.ServicePortName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class ElementOwnersTest {
    private static final ServicePortName A = new ServicePortName("ns", "a", "http", Protocol.TCP);
    private static final ServicePortName B = new ServicePortName("ns", "b", "http", Protocol.TCP);
    private static final ServicePortName C = new ServicePortName("ns", "c", "http", Protocol.TCP);

    private static Element element(String comment) {
        return new Element("cluster-ips", List.of(new Value.Addr(IpAddress.parse("172.30.0.10"))), null, comment);
    }

    @Test
    void theFirstOwnerInServicePortOrderHoldsTheElementWhicheverCameFirst() {
        ElementOwners owners = new ElementOwners();
        Element fromC = element("ns/c:http"), fromA = element("ns/a:http"), fromB = element("ns/b:http");
        owners.add(C, fromC);
        assertEquals(fromC, owners.first(fromC.id()));
        owners.add(B, fromB);
        owners.add(A, fromA);
        assertEquals(fromA, owners.first(fromA.id()));
        owners.remove(A, fromA.id());
        assertEquals(fromB, owners.first(fromA.id()));
        owners.remove(B, fromA.id());
        assertEquals(fromC, owners.first(fromA.id()), "back to a sole owner");
        owners.remove(C, fromA.id());
        assertNull(owners.first(fromA.id()));
    }

    @Test
    void aSecondCopyFromTheSameOwnerAndARemovalByAnotherChangeNothing() {
        ElementOwners owners = new ElementOwners();
        Element first = element("first"), again = element("again");
        owners.add(A, first);
        owners.add(A, again);
        assertEquals(first, owners.first(first.id()));
        owners.remove(B, first.id());
        assertEquals(first, owners.first(first.id()));
        owners.add(B, element("b"));
        owners.add(A, again);
        assertEquals(first, owners.first(first.id()), "still A's first copy once a second owner came");
        owners.clear();
        assertNull(owners.first(first.id()));
    }
}
