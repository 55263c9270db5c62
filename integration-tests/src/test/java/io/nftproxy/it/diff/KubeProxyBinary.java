package io.nftproxy.it.diff;

import io.nftproxy.it.api.ApiServerBinaries;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Upstream kube-proxy, the release the renderer matches ({@link ApiServerBinaries#K8S_VERSION}): where
 * {@code integration-tests/apiserver/build.sh kube-proxy} puts it (beside the API server), else the node harness's
 * build (integration-tests/node/build.sh), else {@code -Dnftproxy.kubeProxy=PATH}. Absent, the differential tests
 * skip with the reason; with {@value #REQUIRED_ENV} set (CI sets it) they fail instead.
 */
final class KubeProxyBinary {
    static final String REQUIRED_ENV = "NFTPROXY_REQUIRE_KUBE_PROXY";

    private KubeProxyBinary() {}

    static List<Path> candidates() {
        String given = System.getProperty("nftproxy.kubeProxy");
        if (given != null && !given.isBlank()) return List.of(Path.of(given));
        return List.of(ApiServerBinaries.binDir().resolve("kube-proxy"),
                ApiServerBinaries.cacheRoot().resolve("node-" + ApiServerBinaries.K8S_VERSION).resolve("bin").resolve("kube-proxy"));
    }

    static Optional<Path> locate() { return candidates().stream().filter(Files::isExecutable).findFirst(); }

    /** Why kube-proxy cannot run here, or empty when it can. */
    static Optional<String> unavailabilityCause() {
        if (locate().isPresent()) return Optional.empty();
        return Optional.of("no kube-proxy " + ApiServerBinaries.K8S_VERSION + " at " + candidates()
                + "; run integration-tests/apiserver/build.sh kube-proxy (builds it from the Go module proxy, once)");
    }

    static boolean required() {
        String v = System.getenv(REQUIRED_ENV);
        return v != null && !v.isBlank() && !v.equals("0");
    }
}
