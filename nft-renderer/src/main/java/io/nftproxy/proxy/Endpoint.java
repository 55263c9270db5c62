package io.nftproxy.proxy;

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
    public String hostPort() {
        return ip.family() == IpFamily.IPV6 ? "[" + ip + "]:" + port : ip + ":" + port;
    }

    /** Usable as a cluster endpoint when ready; serving+terminating ones are only a fallback. */
    public boolean servingTerminating() { return serving && terminating; }
}
