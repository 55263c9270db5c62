package io.nftproxy.health;

import io.nftproxy.http.Response;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HealthCheckNodePortsTest {
    @Test
    void bodyAndHeadersAreKubeProxys() {
        Response r = new ServiceHealth("demo", "hello-lb", 31692, 2).respond(true);
        assertEquals(200, r.status());
        assertEquals("2", r.headers().get("X-Load-Balancing-Endpoint-Weight"));
        assertEquals("{\n\t\"service\": {\n\t\t\"namespace\": \"demo\",\n\t\t\"name\": \"hello-lb\"\n\t},\n"
                + "\t\"localEndpoints\": 2,\n\t\"serviceProxyHealthy\": true\n}", r.body());
        assertEquals(503, new ServiceHealth("demo", "hello-lb", 31692, 0).respond(true).status(), "no local endpoint");
        assertEquals(503, new ServiceHealth("demo", "hello-lb", 31692, 2).respond(false).status(), "proxy unhealthy");
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static HttpResponse<String> get(int port) throws Exception {
        return get("127.0.0.1", port);
    }

    private static HttpResponse<String> get(String host, int port) throws Exception {
        return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build()
                .send(HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + "/anything")).timeout(Duration.ofSeconds(3)).build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void serversFollowTheServicesAndAnswerFromTheLatestState() throws Exception {
        AtomicBoolean healthy = new AtomicBoolean(true);
        int port = freePort();
        List<InetAddress> lo = List.of(InetAddress.getLoopbackAddress());
        try (HealthCheckNodePorts hc = new HealthCheckNodePorts(healthy::get)) {
            hc.sync(Map.of("demo/lb", new ServiceHealth("demo", "lb", port, 1)), lo);
            assertEquals(200, get(port).statusCode());
            hc.sync(Map.of("demo/lb", new ServiceHealth("demo", "lb", port, 0)), lo);
            HttpResponse<String> r = get(port);
            assertEquals(503, r.statusCode());
            assertEquals("0", r.headers().firstValue("X-Load-Balancing-Endpoint-Weight").orElse(""));
            hc.sync(Map.of(), lo);
            assertTrue(hc.openPorts().isEmpty());
            boolean refused = false;
            try {
                get(port);
            } catch (java.net.ConnectException e) {
                refused = true;
            }
            assertTrue(refused, "closed when the service went away");
        }
    }

    @Test
    void noAddressOpensNothingAndAChangedAddressRebinds() throws Exception {
        int port = freePort();
        Map<String, ServiceHealth> lb = Map.of("demo/lb", new ServiceHealth("demo", "lb", port, 1));
        InetAddress second = InetAddress.getByName("127.0.0.2");
        try (HealthCheckNodePorts hc = new HealthCheckNodePorts(() -> true)) {
            hc.sync(lb, List.of());
            assertTrue(hc.openPorts().isEmpty(), "nothing can listen without an address");
            hc.sync(lb, List.of(InetAddress.getLoopbackAddress()));
            assertEquals(List.of(port), hc.openPorts());
            assertEquals(200, get("127.0.0.1", port).statusCode());
            hc.sync(lb, List.of(second));
            assertEquals(200, get("127.0.0.2", port).statusCode(), "bound to the new address");
            assertThrows(java.net.ConnectException.class, () -> get("127.0.0.1", port), "left the old one");
            hc.sync(lb, List.of());
            assertTrue(hc.openPorts().isEmpty(), "the address went away");
        }
    }
}
