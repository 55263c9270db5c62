package io.nftproxy.netlink.nft;

import io.nftproxy.nft.TableContent;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;
import io.nftproxy.render.Renderer;

import static io.nftproxy.TestAddresses.NODE;
import static io.nftproxy.TestAddresses.OTHER_NODE;
import static io.nftproxy.TestAddresses.OTHER_POD;
import static io.nftproxy.TestAddresses.POD_A;
import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;

/** A small but real kube-proxy table: one ClusterIP Service with two endpoints, rendered by the upstream renderer. */
final class TestTables {
    private TestTables() {}

    static TableContent small(IpFamily family) {
        return Renderer.upstream().render(cluster()
                .with(svc("default", "web").clusterIP("172.30.0.10").port("http", "TCP", 80))
                .with(slice("default", "web", "web-abc").port("http", "TCP", 8080).ready(POD_A, NODE).ready(OTHER_POD, OTHER_NODE))
                .snapshot(), NodeContext.minimal(NODE)).table(family);
    }
}
