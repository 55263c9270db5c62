package io.nftproxy.daemon;

import io.nftproxy.config.ConfigDocument;
import io.nftproxy.config.ProxyConfig;
import io.nftproxy.health.HealthResponses;
import io.nftproxy.health.ProxyHealth;
import io.nftproxy.http.Response;
import io.nftproxy.metrics.ProxyMetrics;

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
            case "/healthz" -> {
                Response r = HealthResponses.healthz(s);
                metrics.healthz(r.status());
                yield r;
            }
            case "/livez" -> {
                Response r = HealthResponses.livez(s);
                metrics.livez(r.status());
                yield r;
            }
            default -> null;
        };
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
