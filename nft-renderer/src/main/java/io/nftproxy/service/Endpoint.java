package io.nftproxy.service;

import io.nftproxy.net.IpAddress;

import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * One backend of one service port, after slice merging and validation. {@code local} means the slice named this
 * node. Hints are the EndpointSlice controller's topology hints, trusted as upstream does.
 */
public record Endpoint(IpAddress ip, int port, boolean ready, boolean serving, boolean terminating, boolean local,
                       String nodeName, Set<String> zoneHints, Set<String> nodeHints) {
    public Endpoint {
        zoneHints = zoneHints == null ? Set.of() : Set.copyOf(zoneHints);
        nodeHints = nodeHints == null ? Set.of() : Set.copyOf(nodeHints);
    }

    public static Endpoint ready(String ip, int port, boolean local) {
        return new Endpoint(IpAddress.parse(ip), port, true, true, false, local, null, Set.of(), Set.of());
    }

    /** The key upstream sorts by, which fixes numgen indices: {@code ip:port}, IPv6 as {@code [ip]:port}. */
    public String hostPort() { return ip.withPort(port); }

    /**
     * Sorted by {@link #hostPort()} text, computing each key once: a comparator that builds both strings on
     * every comparison made a 10-endpoint sort build ~70 strings.
     */
    public static List<Endpoint> sortedByHostPort(Collection<Endpoint> endpoints) {
        int n = endpoints.size();
        if (n <= 1) return List.copyOf(endpoints);
        String[] keys = new String[n];
        Endpoint[] eps = endpoints.toArray(new Endpoint[0]);
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            keys[i] = eps[i].hostPort();
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> keys[a].compareTo(keys[b]));
        Endpoint[] out = new Endpoint[n];
        for (int i = 0; i < n; i++) out[i] = eps[order[i]];
        return List.of(out);
    }

    /** Usable as a cluster endpoint when ready; serving+terminating ones are only a fallback. */
    public boolean servingTerminating() { return serving && terminating; }
}
