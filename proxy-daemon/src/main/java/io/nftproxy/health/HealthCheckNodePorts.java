package io.nftproxy.health;

import io.nftproxy.http.HttpServer;
import io.nftproxy.http.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * One HTTP server per health-check NodePort, opened and closed as services come and go, at the end of each
 * successful sync. Each listens on the given addresses (the nodePortAddresses IPs, or the unspecified address when
 * they match everything). The answer is computed per request from the latest state, so endpoint changes need no
 * server restart.
 */
public final class HealthCheckNodePorts implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HealthCheckNodePorts.class);

    private final BooleanSupplier proxyHealthy;
    private final Map<String, ServiceHealth> current = new ConcurrentHashMap<>();
    private final Map<Integer, List<HttpServer>> servers = new HashMap<>();
    private final Map<Integer, String> owner = new HashMap<>();
    private List<InetAddress> boundTo = List.of();
    private boolean warnedNoAddress;

    public HealthCheckNodePorts(BooleanSupplier proxyHealthy) {
        this.proxyHealthy = proxyHealthy;
    }

    /**
     * Brings the servers in line with {@code wanted}; a port that cannot be bound is logged and retried next sync.
     * When the listen addresses change (a node IP came or went), every server is rebound to the new ones; with no
     * address at all nothing can listen, which is logged once rather than reported as open.
     */
    public synchronized void sync(Map<String, ServiceHealth> wanted, List<InetAddress> listen) {
        current.clear();
        current.putAll(wanted);
        Map<Integer, String> want = new HashMap<>();
        if (listen.isEmpty()) {
            if (!wanted.isEmpty() && !warnedNoAddress) {
                LOG.warn("health check nodeports not served: no node address matches nodePortAddresses ports={}",
                        wanted.values().stream().map(ServiceHealth::port).sorted().toList());
                warnedNoAddress = true;
            }
        } else {
            warnedNoAddress = false;
            wanted.forEach((k, v) -> want.putIfAbsent(v.port(), k));
        }
        boolean rebind = !listen.equals(boundTo);
        boundTo = List.copyOf(listen);
        for (Integer port : List.copyOf(servers.keySet())) {
            if (rebind || !owner.get(port).equals(want.get(port))) {
                servers.remove(port).forEach(HttpServer::close);
                LOG.info("health check nodeport closed port={} service={}", port, owner.remove(port));
            }
        }
        for (Map.Entry<Integer, String> e : want.entrySet()) {
            if (servers.containsKey(e.getKey())) continue;
            String svc = e.getValue();
            List<HttpServer> opened = new ArrayList<>();
            try {
                for (InetAddress a : listen) opened.add(HttpServer.start("health check nodeport of " + svc,
                        new InetSocketAddress(a, e.getKey()), path -> respond(svc)));
                servers.put(e.getKey(), opened);
                owner.put(e.getKey(), svc);
                LOG.info("health check nodeport opened port={} service={} addresses={}", e.getKey(), svc, listen);
            } catch (Exception ex) {
                opened.forEach(HttpServer::close);
                LOG.warn("health check nodeport failed port={} service={} error={}", e.getKey(), svc,
                        ex instanceof java.net.BindException ? ex.getMessage() : ex.toString());
            }
        }
    }

    private Response respond(String svc) {
        ServiceHealth h = current.get(svc);
        if (h == null) return Response.text(503, "service gone\n");
        return h.respond(proxyHealthy.getAsBoolean());
    }

    synchronized List<Integer> openPorts() { return List.copyOf(servers.keySet()); }

    @Override public synchronized void close() {
        servers.values().forEach(l -> l.forEach(HttpServer::close));
        servers.clear();
        owner.clear();
    }
}
