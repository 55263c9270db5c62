package io.nftproxy.it.api;

import io.nftproxy.config.ProxyConfig;
import io.nftproxy.daemon.NodeNetwork;
import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.node.NodeResolver;
import io.nftproxy.nft.TableContent;
import io.nftproxy.readback.KernelTableParser;
import io.nftproxy.readback.TableComparison;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import io.nftproxy.source.ClusterOnce;
import io.nftproxy.source.LoadResult;
import io.nftproxy.source.api.ApiServer;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * The whole IPv4 table a daemon must hold for the API server's state now: the cluster listed once (as
 * {@code render --kubeconfig} lists it), the node resolved from the Node object and the node namespace's interface
 * addresses as the daemon resolves it, rendered by the daemon's renderer; and every difference between that and the
 * table the kernel holds, read back and compared by {@link TableComparison}.
 */
final class ClusterRender {
    private final TableContent expected;

    private ClusterRender(TableContent expected) { this.expected = expected; }

    static ClusterRender of(Path kubeconfig, ProxyConfig config, TableLayout layout, KernelNamespace node) throws Exception {
        LoadResult load = ClusterOnce.read(ApiServer.fromKubeconfig(kubeconfig), config.hostnameOverride(), Duration.ofSeconds(60));
        List<io.nftproxy.net.IpAddress> local;
        try (NodeNetwork net = NodeNetwork.namespace(node.handle())) {
            local = net.interfaceAddresses();
        }
        NodeResolver.Resolved r = NodeResolver.resolve(config, load.snapshot().node(config.hostnameOverride()), local);
        return new ClusterRender(new Renderer(layout).render(load.snapshot(), r.node()).table(IpFamily.IPV4));
    }

    TableContent table() { return expected; }

    /** Every difference between this render and the kernel's table now; empty when they are equal. */
    List<String> diff(KernelNamespace node) throws Exception {
        String json;
        try {
            json = node.listTable(IpFamily.IPV4);
        } catch (java.io.IOException e) {
            return List.of("the kernel holds no table ip kube-proxy (" + e.getMessage() + ")");
        }
        return TableComparison.diff(expected, KernelTableParser.parse(json), Set.of(TableComparison.Tolerance.CHAIN_COMMENTS_UNREPORTED));
    }

    /** Waits until the kernel's table equals this render; returns the milliseconds it took, or fails with the differences. */
    long await(KernelNamespace node, Duration limit) throws Exception {
        long t0 = System.nanoTime();
        List<String> d = diff(node);
        while (!d.isEmpty()) {
            if (System.nanoTime() - t0 > limit.toNanos()) {
                throw new AssertionError("the kernel's table is not the render of the API server's state within " + limit.toSeconds()
                        + " s: " + d.size() + " difference(s), first ones:\n  " + String.join("\n  ", d.subList(0, Math.min(20, d.size()))));
            }
            Thread.sleep(200);
            d = diff(node);
        }
        return (System.nanoTime() - t0) / 1_000_000;
    }
}
