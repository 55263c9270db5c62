package io.nftproxy.daemon;

import io.nftproxy.config.ConfigDocument;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.health.HealthResponses;
import io.nftproxy.health.ProxyHealth;
import io.nftproxy.http.Response;
import io.nftproxy.metrics.ProxyMetrics;

import java.util.function.IntConsumer;

/** What the daemon's two servers answer: the healthz server (healthzBindAddress) and the metrics server. */
final class DaemonRoutes {
    private final ProxyHealth health;
    private final ProxyMetrics metrics;
    private final ProxyConfig config;

    DaemonRoutes(ProxyHealth health, ProxyMetrics metrics, ProxyConfig config) {
        this.health = health;
        this.metrics = metrics;
        this.config = config;
    }

    /** The healthz server: {@code /healthz} and {@code /livez}, each answer counted by code as kube-proxy counts them. */
    Response health(String path) {
        ProxyHealth.Status s = health.status();
        return switch (path) {
            case "/healthz" -> counted(HealthResponses.healthz(s), metrics::healthz);
            case "/livez" -> counted(HealthResponses.livez(s), metrics::livez);
            default -> null;
        };
    }

    private static Response counted(Response r, IntConsumer byCode) {
        byCode.accept(r.status());
        return r;
    }

    /** The metrics server: metrics, kube-proxy's {@code /proxyMode} and {@code /configz}, and a plain liveness answer. */
    Response metrics(String path) {
        return switch (path) {
            case "/metrics" -> metrics.scrape();
            case "/proxyMode" -> Response.text(200, "nftables");
            case "/configz" -> Response.json(200, ConfigDocument.configz(config));
            case "/healthz" -> Response.text(200, "ok");
            default -> null;
        };
    }
}
