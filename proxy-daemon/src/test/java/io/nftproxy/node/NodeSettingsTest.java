package io.nftproxy.node;

import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.proxy.Diagnostic;
import io.nftproxy.net.IpAddress;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NodeSettingsTest {
    @Test
    void aNodeAddressNoHostCanHaveIsSkippedWithAReason() {
        NodeObject node = new NodeObject(ObjectMeta.of(null, "n1"), List.of(
                new NodeObject.Address("InternalIP", "127.0.0.1"),
                new NodeObject.Address("InternalIP", "0.0.0.0"),
                new NodeObject.Address("InternalIP", "224.0.0.1"),
                new NodeObject.Address("InternalIP", "192.168.10.20")), List.of(), List.of());
        List<Diagnostic> diags = new ArrayList<>();
        assertEquals(List.of(IpAddress.parse("192.168.10.20")), NodeSettings.nodeObjectIPs(node, diags),
                "the primary node IP is the first usable one");
        assertEquals(3, diags.size(), diags.toString());
        for (Diagnostic d : diags) {
            assertTrue(d.kind().equals("Node") && d.field().equals("status.addresses")
                    && d.reason().contains("not unspecified, loopback or multicast"), d.toString());
        }
    }
}
