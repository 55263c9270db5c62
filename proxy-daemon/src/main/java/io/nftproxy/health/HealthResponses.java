package io.nftproxy.health;

import io.nftproxy.http.Response;

import java.time.Instant;
import java.util.stream.Collectors;

/**
 * /livez and /healthz as kube-proxy answers them: 200 when every family is healthy, else 503, with a JSON body
 * carrying the times; /healthz is also 503 when the node is not eligible (missing, being deleted, or tainted
 * ToBeDeletedByClusterAutoscaler).
 */
public final class HealthResponses {
    private HealthResponses() {}

    /**
     * Before the first sync the process is alive and waiting for the cluster (an API server not up yet, say): a
     * restart would not help, so /livez says 200 while /healthz says 503.
     */
    public static Response livez(ProxyHealth.Status s) {
        return Response.json(s.healthy() || s.lastUpdated() == null ? 200 : 503, body(s, false));
    }

    public static Response healthz(ProxyHealth.Status s) {
        return Response.json(s.healthy() && s.eligible() ? 200 : 503, body(s, true));
    }

    private static String body(ProxyHealth.Status s, boolean withNode) {
        // As upstream: when healthy, lastUpdated reads as the current time, so a probe shows a fresh value.
        Instant last = s.healthy() ? s.currentTime() : s.lastUpdated();
        StringBuilder b = new StringBuilder("{");
        b.append("\"lastUpdated\": ").append(time(last)).append(", \"currentTime\": ").append(time(s.currentTime()));
        if (withNode) b.append(", \"nodeEligible\": ").append(s.eligible());
        b.append(", \"healthy\": ").append(s.healthy());
        if (s.cause() != null) b.append(", \"cause\": ").append(jsonString(s.cause()));
        b.append(", \"status\": {");
        b.append(s.families().entrySet().stream().map(e -> "\"" + e.getKey().apiName() + "\": {\"lastUpdated\": "
                        + time(e.getValue().lastUpdated()) + ", \"healthy\": " + e.getValue().healthy() + "}")
                .collect(Collectors.joining(", ")));
        return b.append("}}").toString();
    }

    /** Our own text, but it names another process's command line: escape what JSON needs escaped. */
    private static String jsonString(String t) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : t.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    private static String time(Instant t) { return t == null ? "null" : "\"" + t + "\""; }
}
