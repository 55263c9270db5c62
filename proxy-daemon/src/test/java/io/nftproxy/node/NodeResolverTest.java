package io.nftproxy.node;

import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.service.Diagnostic;
import io.nftproxy.net.IpAddress;
import io.nftproxy.config.LocalDetection;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.service.LocalTraffic;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NodeResolverTest {
    @Test
    void aNodeAddressNoHostCanHaveIsSkippedWithAReason() {
        NodeObject node = new NodeObject(ObjectMeta.of(null, "n1"), List.of(
                new NodeObject.Address("InternalIP", "127.0.0.1"),
                new NodeObject.Address("InternalIP", "0.0.0.0"),
                new NodeObject.Address("InternalIP", "224.0.0.1"),
                new NodeObject.Address("InternalIP", "192.168.10.20")), List.of(), List.of());
        List<Diagnostic> diags = new ArrayList<>();
        assertEquals(List.of(IpAddress.parse("192.168.10.20")), NodeResolver.nodeObjectIPs(node, diags),
                "the primary node IP is the first usable one");
        assertEquals(3, diags.size(), diags.toString());
        for (Diagnostic d : diags) {
            assertTrue(d.kind().equals("Node") && d.field().equals("status.addresses")
                    && d.reason().contains("not unspecified, loopback or multicast"), d.toString());
        }
    }

    private static final NodeObject NODE = new NodeObject(ObjectMeta.of(null, "n1"), List.of(
            new NodeObject.Address("InternalIP", "192.168.10.20"), new NodeObject.Address("InternalIP", "fd00:192:168:10::20")),
            List.of(), List.of("10.0.9.0/24", "not-a-cidr", "fd00:10::9:0/112"));

    private static ProxyConfig settings(IpAddress bind, LocalDetection d) {
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = "n1";
        b.clusterCidrs = List.of(IpPrefix.parse("10.0.0.0/8"));
        b.bindAddress = bind;
        b.detectLocal = d;
        return b.build();
    }

    /** NodeCIDR: the Node object's spec.podCIDRs are the detector, not clusterCIDR; a bad entry is a diagnostic. */
    @Test
    void nodeCidrDetectsByTheNodesPodCidrs() {
        NodeResolver.Resolved r = NodeResolver.resolve(settings(null, new LocalDetection("NodeCIDR", "", "")), NODE, null);
        assertEquals(LocalTraffic.bySource(List.of(IpPrefix.parse("10.0.9.0/24"), IpPrefix.parse("fd00:10::9:0/112"))), r.node().localTraffic());
        assertEquals(List.of("spec.podCIDRs"), r.diagnostics().stream().map(Diagnostic::field).toList());
        NodeResolver.Resolved none = NodeResolver.resolve(settings(null, new LocalDetection("NodeCIDR", "", "")), null, null);
        assertEquals(LocalTraffic.bySource(List.of()), none.node().localTraffic());
        assertTrue(none.notes().stream().anyMatch(n -> n.contains("no spec.podCIDRs")), none.notes().toString());
        assertEquals(LocalTraffic.bySource(List.of(IpPrefix.parse("10.0.0.0/8"))), NodeResolver.resolve(settings(null, LocalDetection.DEFAULT), NODE, null).node().localTraffic());
        assertEquals(LocalTraffic.byInterface("cbr0", false), NodeResolver.resolve(settings(null, new LocalDetection("BridgeInterface", "cbr0", "")), NODE, null).node().localTraffic());
        assertEquals(LocalTraffic.byInterface("veth", true), NodeResolver.resolve(settings(null, new LocalDetection("InterfaceNamePrefix", "", "veth")), NODE, null).node().localTraffic());
    }

    /** kube-proxy's bindAddress, when not unspecified, is the node's IP of its family, first: "primary" NodePorts follow it. */
    @Test
    void aBindAddressIsThePrimaryNodeIpOfItsFamily() {
        NodeResolver.Resolved r = NodeResolver.resolve(settings(IpAddress.parse("192.168.10.99"), LocalDetection.DEFAULT), NODE, null);
        assertEquals(List.of(IpAddress.parse("192.168.10.99"), IpAddress.parse("fd00:192:168:10::20")), r.node().nodeIPs());
        assertEquals(List.of(IpPrefix.parse("192.168.10.99/32"), IpPrefix.parse("fd00:192:168:10::20/128")), r.node().nodePortAddresses());
        assertEquals(List.of(IpAddress.parse("192.168.10.20"), IpAddress.parse("fd00:192:168:10::20")),
                NodeResolver.resolve(settings(IpAddress.parse("0.0.0.0"), LocalDetection.DEFAULT), NODE, null).node().nodeIPs(), "0.0.0.0 changes nothing");
    }
}
