package io.nftproxy;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ServiceObject;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A seeded random walk over cluster states: services and slices added, removed and modified (ports, types,
 * policies, affinity, externalIPs, LB VIPs, source ranges), endpoints added, removed and flipping between ready,
 * terminating and not ready. The same seed always gives the same walk, so a failure can be replayed.
 */
public final class RandomClusters {
    private final Random rnd;
    private final Map<String, ServiceObject> services = new LinkedHashMap<>();
    private final Map<String, EndpointSliceObject> slices = new LinkedHashMap<>();
    private int next;

    public RandomClusters(long seed) { this.rnd = new Random(seed); }

    public ClusterSnapshot snapshot() {
        return new ClusterSnapshot(List.copyOf(services.values()), List.copyOf(slices.values()), List.of(), List.of());
    }

    /** Applies one random change and says what it was. */
    public String step() {
        int op = services.isEmpty() ? 0 : rnd.nextInt(10);
        String name = services.isEmpty() ? null : pick(new ArrayList<>(services.keySet()));
        switch (op) {
            case 0, 1 -> {
                String n = "svc" + (next++);
                services.put(n, service(n));
                if (rnd.nextInt(4) > 0) slices.put(n, slice(n, services.get(n)));
                return "add " + n;
            }
            case 2 -> {
                services.remove(name);
                slices.remove(name);
                return "remove " + name;
            }
            case 3, 4 -> {
                services.put(name, service(name));
                if (slices.containsKey(name)) slices.put(name, slice(name, services.get(name)));
                return "modify service " + name;
            }
            case 5 -> {
                slices.remove(name);
                return "remove slice " + name;
            }
            default -> {
                slices.put(name, slice(name, services.get(name)));
                return "new endpoints " + name;
            }
        }
    }

    private ServiceObject service(String n) {
        int idx = Integer.parseInt(n.substring(3));
        TestClusters.Svc s = TestClusters.svc("ns" + (idx % 3), n).clusterIP("172.30." + (idx / 250) + "." + (idx % 250 + 1));
        String type = pick(List.of("ClusterIP", "ClusterIP", "NodePort", "LoadBalancer"));
        s.type(type);
        int ports = 1 + rnd.nextInt(3);
        for (int p = 0; p < ports; p++) {
            Integer nodePort = type.equals("ClusterIP") ? null : 30000 + (idx * 3 + p) % 2000;
            // Now and then a port another Service may hold too: the walk must resolve claims as a full render does.
            if (nodePort != null && rnd.nextInt(6) == 0) nodePort = 31000 + rnd.nextInt(3);
            s.port("p" + p, pick(List.of("TCP", "TCP", "UDP", "SCTP")), 80 + p, nodePort);
        }
        if (rnd.nextInt(5) == 0) s.externalIP("192.0.2." + (idx % 250 + 1));
        if (type.equals("LoadBalancer")) {
            s.lbIngress("203.0.113." + (idx % 250 + 1));
            if (rnd.nextBoolean()) s.sourceRange("198.51.100.0/24");
            if (rnd.nextInt(3) == 0) s.sourceRange("192.168.10.0/24");
        }
        if (rnd.nextInt(4) == 0) s.clientIPAffinity(pick(List.of(60, 600, 10800)));
        if (rnd.nextInt(4) == 0) s.internalLocal();
        if (!type.equals("ClusterIP") && rnd.nextInt(3) == 0) s.externalLocal();
        if (type.equals("LoadBalancer")) s.healthCheckNodePort(31000 + rnd.nextInt(4));
        if (rnd.nextBoolean()) s.created("2025-01-0" + (1 + rnd.nextInt(3)) + "T00:00:00Z");
        return s.build();
    }

    private EndpointSliceObject slice(String n, ServiceObject svc) {
        TestClusters.Slice sl = TestClusters.slice(svc.meta().namespace(), n, n + "-" + rnd.nextInt(3));
        for (ServiceObject.PortSpec p : svc.ports()) sl.port(p.name(), p.protocol(), 8000 + rnd.nextInt(3));
        // Now and then a slice around 16 endpoints, the most the flat layout dispatches without chains: a port
        // crossing it moves between flat elements and chains.
        int eps = rnd.nextInt(8) == 0 ? 13 + rnd.nextInt(10) : rnd.nextInt(5);
        for (int e = 0; e < eps; e++) {
            String ip = "10.180." + rnd.nextInt(4) + "." + (1 + rnd.nextInt(20));
            String node = rnd.nextBoolean() ? TestClusters.NODE : TestClusters.OTHER_NODE;
            switch (rnd.nextInt(5)) {
                case 0 -> sl.endpoint(ip, false, true, true, node);
                case 1 -> sl.endpoint(ip, false, false, false, node);
                default -> sl.ready(ip, node);
            }
        }
        return sl.build();
    }

    private <T> T pick(List<T> l) { return l.get(rnd.nextInt(l.size())); }
}
