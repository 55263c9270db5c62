package io.nftproxy.health;

import io.nftproxy.http.Response;
import io.nftproxy.service.Endpoint;
import io.nftproxy.net.IpAddress;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ServicePort;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What a health-check NodePort answers for one LoadBalancer service with externalTrafficPolicy Local: 200 while
 * this node has a ready local endpoint and the proxy is healthy, else 503, so the cloud load balancer sends traffic
 * only to nodes that can serve it locally. The body and headers are kube-proxy's.
 *
 * @param localEndpoints distinct IPs of ready local endpoints across all of the service's ports (terminating ones
 *                       do not count: the node is draining)
 */
public record ServiceHealth(String namespace, String name, int port, int localEndpoints) {

    public Response respond(boolean proxyHealthy) {
        boolean ok = localEndpoints > 0 && proxyHealthy;
        String body = "{\n\t\"service\": {\n\t\t\"namespace\": \"" + namespace + "\",\n\t\t\"name\": \"" + name
                + "\"\n\t},\n\t\"localEndpoints\": " + localEndpoints + ",\n\t\"serviceProxyHealthy\": " + proxyHealthy + "\n}";
        return new Response(ok ? 200 : 503, "application/json",
                Map.of("X-Content-Type-Options", "nosniff", "X-Load-Balancing-Endpoint-Weight", Integer.toString(localEndpoints)),
                body);
    }

    /**
     * Every service with a health-check NodePort in these states, keyed by {@code ns/name}: the families' whole
     * states, or one Service's state per family.
     */
    public static Map<String, ServiceHealth> of(Iterable<? extends ProxyState> states) {
        Map<String, ServiceHealth> out = new TreeMap<>();
        Map<String, Set<IpAddress>> ready = new TreeMap<>();
        for (ProxyState st : states) {
            for (ServicePort sp : st.servicePorts().values()) {
                if (sp.healthCheckNodePort() == 0) continue;
                String key = sp.name().serviceKey();
                Set<IpAddress> ips = ready.computeIfAbsent(key, k -> new HashSet<>());
                for (Endpoint e : st.endpointsOf(sp.name())) if (e.local() && e.ready()) ips.add(e.ip());
                out.put(key, new ServiceHealth(sp.name().namespace(), sp.name().name(), sp.healthCheckNodePort(), 0));
            }
        }
        out.replaceAll((k, v) -> new ServiceHealth(v.namespace(), v.name(), v.port(), ready.get(k).size()));
        return out;
    }
}
