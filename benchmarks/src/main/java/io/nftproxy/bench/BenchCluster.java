package io.nftproxy.bench;

import io.nftproxy.service.Endpoint;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.NodeContext;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ServicePort;
import io.nftproxy.service.ServicePortName;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A synthetic cluster of N ClusterIP services with E remote endpoints each, built straight into the validated
 * model so the generator costs nothing next to what is measured. Services are 172.16.0.0/12, endpoints
 * 10.0.0.0/8 (documentation and private ranges only).
 */
public final class BenchCluster {
    public static final String NODE = "bench-node";
    private final int endpointsPerService;
    private int nextEndpoint;

    public BenchCluster(int endpointsPerService) { this.endpointsPerService = endpointsPerService; }

    public static NodeContext node() {
        return new NodeContext(NODE, null, List.of(IpAddress.parse("192.168.10.20")), List.of(IpPrefix.parse("10.0.0.0/8")),
                List.of(IpPrefix.parse("192.168.10.20/32")), List.of(IpAddress.parse("192.168.10.20")), false,
                NodeContext.DEFAULT_MASQUERADE_BIT, true);
    }

    public ProxyState state(int services) {
        TreeMap<ServicePortName, ServicePort> ports = new TreeMap<>();
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>();
        for (int i = 0; i < services; i++) {
            ServicePort sp = service(i);
            ports.put(sp.name(), sp);
            eps.put(sp.name(), endpoints(endpointsPerService));
        }
        return new ProxyState(IpFamily.IPV4, ports, eps, List.of(), List.of());
    }

    public static ServicePort service(int i) {
        ServicePortName n = new ServicePortName("bench-" + (i % 50), "svc-" + i, "http", Protocol.TCP);
        int a = i + 1;
        IpAddress ip = IpAddress.parse("172." + (16 + (a >> 16)) + "." + ((a >> 8) & 255) + "." + (a & 255));
        return new ServicePort(n, IpFamily.IPV4, ip, 80, 0, List.of(), List.of(), List.of(), 0, false, false, 0, "8080");
    }

    /** Fresh endpoints, never used before in this cluster: a moved endpoint gets a new address. */
    public List<Endpoint> endpoints(int count) {
        List<Endpoint> out = new ArrayList<>(count);
        for (int e = 0; e < count; e++) {
            int a = ++nextEndpoint;
            out.add(Endpoint.ready("10." + (a >> 16) + "." + ((a >> 8) & 255) + "." + (a & 255), 8080, false));
        }
        return Endpoint.sortedByHostPort(out);
    }

    /** The endpoints of a service with its first endpoint replaced by a new address. */
    public List<Endpoint> moveOne(List<Endpoint> current) {
        List<Endpoint> out = new ArrayList<>(current.subList(1, current.size()));
        out.addAll(endpoints(1));
        return Endpoint.sortedByHostPort(out);
    }
}
