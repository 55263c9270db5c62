package io.nftproxy.source;

import io.nftproxy.source.api.ApiReachability;
import io.nftproxy.source.api.ApiServer;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The live cluster read once, for the commands an operator runs on a node ({@code render}, {@code trace},
 * {@code conntrack} with {@code --kubeconfig}): the same lists the daemon starts from (Services and EndpointSlices
 * with kube-proxy's selector, this node's Node, ServiceCIDRs), through the daemon's own {@link KubernetesSource} and
 * {@link ClusterStore}, so a command sees exactly the objects the daemon would program. The watches the lists begin
 * are closed as soon as everything is in.
 */
public final class ClusterOnce {
    private static final Duration POLL = Duration.ofMillis(10);

    private ClusterOnce() {}

    /** The API server did not hand over every list in time; the message names the server and why. */
    public static final class NotRead extends IOException {
        NotRead(String message) { super(message); }
    }

    /**
     * Lists the cluster as {@code nodeName} sees it; waits at most {@code timeout} for all lists.
     *
     * @throws NotRead at once when the server refuses the connection, its name does not resolve or its certificate
     *                 is not trusted ({@link ApiServer.Failure#definite}); when a list did not arrive in time otherwise
     *                 (no answer, 401/403, 429, 5xx, a slow server)
     */
    public static LoadResult read(ApiServer api, String nodeName, Duration timeout) throws NotRead, InterruptedException {
        ClusterStore store = new ClusterStore();
        // The Node gets the rest of the timeout after Services and slices, not the daemon's 30 s of patience.
        Duration nodeWait = timeout.dividedBy(2);
        long deadline = System.nanoTime() + timeout.toNanos();
        ApiReachability reachability = ApiReachability.oneShot(api.url(), "for at most " + timeout.toSeconds()
                + " s (--request-timeout), then the command fails");
        try (KubernetesSource source = new KubernetesSource(api, store, Duration.ZERO, nodeWait, reachability)) {
            source.start(nodeName);
            while (!store.ready()) {
                // Refused, no such name, an untrusted certificate: the answer is not going to change within the
                // timeout, so the command says so now instead of waiting it out.
                ApiServer.Failure definite = reachability.failures().values().stream().filter(ApiServer.Failure::definite)
                        .findFirst().orElse(null);
                if (definite != null) throw new NotRead("API server " + api.url() + " unusable: " + definite.detail());
                if (System.nanoTime() - deadline > 0) {
                    Map<String, String> problems = source.problems();
                    List<String> waiting = store.waitingFor();
                    throw new NotRead("API server " + api.url() + ": " + (waiting.isEmpty() ? "not read" : String.join(", ", waiting)
                            + " not listed") + " within " + timeout.toSeconds() + " s"
                            + (problems.isEmpty() ? "" : " (" + String.join("; ", problems.values().stream().distinct().toList()) + ")"));
                }
                Thread.sleep(POLL.toMillis());
            }
            return new LoadResult(store.snapshot(), List.of(), List.of());
        }
    }
}
