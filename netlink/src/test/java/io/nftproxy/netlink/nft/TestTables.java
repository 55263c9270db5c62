package io.nftproxy.netlink.nft;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.nft.TableContent;
import io.nftproxy.net.IpFamily;
import io.nftproxy.proxy.NodeContext;
import io.nftproxy.render.Renderer;

import java.util.List;
import java.util.Map;

/** A small but real kube-proxy table: one ClusterIP Service with two endpoints, rendered by the upstream renderer. */
final class TestTables {
    private TestTables() {}

    static TableContent small(IpFamily family) {
        ServiceObject svc = new ServiceObject(ObjectMeta.of("default", "web"), "ClusterIP", "10.96.0.10",
                List.of("10.96.0.10"), List.of("IPv4"),
                List.of(new ServiceObject.PortSpec("http", "TCP", 80, "8080", null)),
                List.of(), List.of(), List.of(), "None", null, "Cluster", "Cluster", null, null);
        EndpointSliceObject slice = new EndpointSliceObject(
                new ObjectMeta("default", "web-abc", Map.of(EndpointSliceObject.SERVICE_NAME_LABEL, "web"), Map.of(), false),
                "IPv4", List.of(new EndpointSliceObject.PortSpec("http", "TCP", 8080)),
                List.of(endpoint("10.244.1.5", "node-a"), endpoint("10.244.2.7", "node-b")));
        ClusterSnapshot snap = new ClusterSnapshot(List.of(svc), List.of(slice), List.of(), List.of());
        return Renderer.upstream().render(snap, NodeContext.minimal("node-a")).table(family);
    }

    private static EndpointSliceObject.Endpoint endpoint(String ip, String node) {
        return new EndpointSliceObject.Endpoint(List.of(ip), true, true, false, node, null, List.of(), List.of());
    }

}
