package io.nftproxy.cli;

import io.nftproxy.source.ClusterOnce;
import io.nftproxy.source.LoadResult;
import io.nftproxy.source.api.ApiServer;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * {@code --kubeconfig} for the commands that otherwise read {@code --manifests}: the live cluster, read once (every
 * Service, EndpointSlice and ServiceCIDR, and this node's Node), so an operator on a node asks about the cluster as
 * it is. Read access to those kinds is all it needs: kube-proxy's credentials do.
 */
public final class LiveCluster {
    @Option(names = "--kubeconfig", paramLabel = "FILE",
            description = {"Read the objects from the API server of this kubeconfig instead of --manifests: listed "
                    + "once, as the daemon lists them (Services and EndpointSlices that kube-proxy would program, the "
                    + "Node named by --hostname-override, ServiceCIDRs).",
                    "Example: --kubeconfig /etc/nftproxy/kubeconfig"})
    Path kubeconfig;

    @Option(names = "--request-timeout", paramLabel = "DURATION", converter = Converters.Timeout.class,
            description = {"With --kubeconfig: the longest wait for all the lists, as a duration (30s, 2m).",
                    "Default: 60s."})
    Duration timeout = Duration.ofSeconds(60);

    /** Lists the cluster as {@code nodeName} sees it. */
    LoadResult read(String nodeName) throws IOException {
        ApiServer api;
        try {
            api = ApiServer.fromKubeconfig(kubeconfig);
        } catch (IllegalArgumentException e) {
            // The caller's message names the file: the reason alone, not "kubeconfig FILE: ..." again.
            throw new IOException(ApiServer.reason(e), e);
        } catch (RuntimeException e) {
            // fabric8 reports a malformed kubeconfig as an unchecked exception; for the operator it is unreadable input.
            throw new IOException(e.getMessage() == null ? e.toString() : e.getMessage(), e);
        }
        try {
            return ClusterOnce.read(api, nodeName, timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while listing from " + api.url(), e);
        }
    }
}
