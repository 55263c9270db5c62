package io.nftproxy.service;

import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.Protocol;

import io.nftproxy.cluster.ServiceObject;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * What Services claim beyond themselves: node ports, which only one Service can have, and addresses, where an
 * externalIP or LoadBalancer IP that is another Service's ClusterIP or this node's address intercepts traffic
 * meant for that Service or node (CVE-2020-8554, which kube-proxy accepts silently; we accept it loudly).
 *
 * <p>Node ports: a nodePort (per protocol) or a healthCheckNodePort claimed by two Services
 * goes to the older one (creation timestamp, then {@code namespace/name}), whatever order the objects arrive in: the
 * API server never hands out one port twice, but a manifest directory or a restored backup can, and a silent last
 * writer would take a port from a Service that had it. A port the daemon itself listens on (TCP) is never given to a
 * Service: DNAT would take {@code /healthz} away from the node. A healthCheckNodePort is a TCP listener, so it
 * collides with TCP nodePorts too.
 *
 * <p>Kept incrementally: {@link #put} records one Service's claims and says which other Services' outcome it
 * changed, so a sync of one Service need not look at the others. Family-independent: the claims come from the
 * Service objects, so both tables and the health-check servers agree. Not thread-safe.
 */
public final class ServiceClaims {
    /** One port of one protocol on the node. */
    record Port(Protocol protocol, int port) {
        @Override public String toString() { return port + "/" + protocol; }
    }

    /** A Service claiming ports, ordered oldest first; one without a readable timestamp counts as newest. */
    record Claimant(String service, Instant created) {
        static final Comparator<Claimant> OLDEST_FIRST = Comparator
                .comparing(Claimant::created, Comparator.nullsLast(Comparator.naturalOrder()))
                .thenComparing(Claimant::service);
    }

    private final Map<Port, String> reserved;
    private final Set<IpAddress> nodeAddresses;
    private final boolean refuseOverlaps;
    private final Map<IpAddress, TreeSet<String>> clusterIPOwners = new HashMap<>();
    private final Map<String, Set<IpAddress>> clusterIPsOf = new HashMap<>();
    private final Map<IpAddress, TreeSet<String>> exposers = new HashMap<>();
    private final Map<String, Set<IpAddress>> exposedOf = new HashMap<>();
    private final Map<Port, TreeSet<Claimant>> holders = new HashMap<>();
    private final Map<String, Set<Port>> byService = new HashMap<>();
    private final Map<String, Claimant> claimants = new HashMap<>();

    /**
     * @param reservedTcpPorts the daemon's own listening TCP ports, each with what listens there ("healthz server")
     * @param nodeAddresses    this node's addresses, which no Service should expose as its own
     * @param refuseOverlaps   an externalIP or LoadBalancer IP that is another Service's ClusterIP or this node's
     *                         address is skipped rather than kept with a warning ({@code --refuse-external-ip-overlaps})
     */
    public ServiceClaims(Map<Integer, String> reservedTcpPorts, Collection<IpAddress> nodeAddresses, boolean refuseOverlaps) {
        Map<Port, String> r = new HashMap<>();
        reservedTcpPorts.forEach((port, what) -> r.put(new Port(Protocol.TCP, port), what));
        this.reserved = Map.copyOf(r);
        this.nodeAddresses = Set.copyOf(nodeAddresses);
        this.refuseOverlaps = refuseOverlaps;
    }

    public static ServiceClaims none() { return new ServiceClaims(Map.of(), List.of(), false); }

    /** Claims of every Service in {@code services}, grouped by {@code namespace/name}. */
    public static ServiceClaims of(List<ServiceObject> services, Map<Integer, String> reservedTcpPorts,
                                   Collection<IpAddress> nodeAddresses, boolean refuseOverlaps) {
        ServiceClaims c = new ServiceClaims(reservedTcpPorts, nodeAddresses, refuseOverlaps);
        Map<String, List<ServiceObject>> byKey = new HashMap<>();
        for (ServiceObject s : services) {
            byKey.computeIfAbsent(ProxyStateBuilder.serviceKey(s), k -> new java.util.ArrayList<>()).add(s);
        }
        byKey.forEach(c::put);
        return c;
    }

    /**
     * Records {@code service}'s claims, as its objects now are (none: it is gone), replacing what it claimed before.
     *
     * @return the other Services whose outcome on a port changed: they must be rebuilt too
     */
    public Set<String> put(String service, List<ServiceObject> objects) {
        Set<Port> before = byService.getOrDefault(service, Set.of());
        Claimant old = claimants.get(service);
        Map<Port, String> winnersBefore = new HashMap<>();
        // Of duplicates, the first is the one the builder keeps.
        ServiceObject first = objects.isEmpty() ? null : objects.get(0);
        Set<Port> after = first == null ? Set.of() : ports(first);
        Claimant now = first == null ? null : new Claimant(service, created(first.meta().creationTimestamp()));
        Set<Port> touched = new HashSet<>(before);
        touched.addAll(after);
        for (Port p : touched) winnersBefore.put(p, winner(p));
        for (Port p : before) {
            TreeSet<Claimant> h = holders.get(p);
            h.remove(old);
            if (h.isEmpty()) holders.remove(p);
        }
        if (now == null || after.isEmpty()) {
            byService.remove(service);
            claimants.remove(service);
        } else {
            byService.put(service, Set.copyOf(after));
            claimants.put(service, now);
            for (Port p : after) holders.computeIfAbsent(p, k -> new TreeSet<>(Claimant.OLDEST_FIRST)).add(now);
        }
        Set<String> affected = new HashSet<>();
        for (Port p : touched) {
            if (Objects.equals(winnersBefore.get(p), winner(p))) continue;
            for (Claimant c : holders.getOrDefault(p, new TreeSet<>())) affected.add(c.service());
        }
        Set<IpAddress> newIPs = first == null ? Set.of() : clusterIPs(first);
        Set<IpAddress> oldIPs = reindex(service, newIPs, clusterIPsOf, clusterIPOwners);
        reindex(service, first == null ? Set.of() : exposed(first), exposedOf, exposers);
        // Whoever exposes an address that became or stopped being a ClusterIP gets a new warning, or loses one.
        if (!oldIPs.equals(newIPs)) {
            Set<IpAddress> changed = new HashSet<>(oldIPs);
            changed.addAll(newIPs);
            for (IpAddress ip : changed) affected.addAll(exposers.getOrDefault(ip, new TreeSet<>()));
        }
        affected.remove(service);
        return affected;
    }

    /** Replaces {@code service}'s addresses in one index; returns the ones it had. */
    private static Set<IpAddress> reindex(String service, Set<IpAddress> now, Map<String, Set<IpAddress>> of,
                                          Map<IpAddress, TreeSet<String>> owners) {
        Set<IpAddress> before = of.getOrDefault(service, Set.of());
        for (IpAddress ip : before) {
            TreeSet<String> s = owners.get(ip);
            s.remove(service);
            if (s.isEmpty()) owners.remove(ip);
        }
        if (now.isEmpty()) of.remove(service);
        else of.put(service, Set.copyOf(now));
        for (IpAddress ip : now) owners.computeIfAbsent(ip, k -> new TreeSet<>()).add(service);
        return before;
    }

    /**
     * Why {@code address}, exposed by {@code service} as an externalIP or LoadBalancer IP, deserves a warning, or
     * is skipped when {@link #refusesOverlaps()}: it is another Service's ClusterIP or this node's address. Null when
     * it is neither.
     */
    public String overlap(String service, IpAddress address) {
        String outcome = refuseOverlaps ? "skipped (--refuse-external-ip-overlaps)" : "kept";
        if (nodeAddresses.contains(address)) {
            return address + " is this node's address; traffic to it on the Service's ports goes to the Service; " + outcome;
        }
        TreeSet<String> owners = clusterIPOwners.get(address);
        if (owners == null) return null;
        for (String o : owners) {
            if (!o.equals(service)) {
                return address + " is the ClusterIP of Service " + o + ", whose traffic on the same ports this Service "
                        + "intercepts (CVE-2020-8554); " + outcome;
            }
        }
        return null;
    }

    /** Whether an {@link #overlap} skips the address rather than keeping it. */
    public boolean refusesOverlaps() { return refuseOverlaps; }

    /**
     * Why {@code service} may not have {@code port} of {@code protocol}, naming who has it; null when it may. A
     * port nobody recorded is free.
     */
    public String lostTo(String service, Protocol protocol, int port) {
        Port p = new Port(protocol, port);
        String own = reserved.get(p);
        if (own != null) return "port " + p + " is nftproxy's own " + own + "; skipped";
        String w = winner(p);
        if (w == null || w.equals(service)) return null;
        return "port " + p + " is also claimed by Service " + w + ", which is older and keeps it; skipped here";
    }

    private String winner(Port p) {
        TreeSet<Claimant> h = holders.get(p);
        return h == null || h.isEmpty() ? null : h.first().service();
    }

    /** The node ports a Service object would program: its nodePorts and, when it uses one, its health-check port. */
    private static Set<Port> ports(ServiceObject svc) {
        Set<Port> out = new HashSet<>();
        if (ProxyStateBuilder.ignoredByLabel(svc.meta().labels()) || "ExternalName".equals(svc.type())) return out;
        // A Service without a usable ClusterIP programs nothing (headless, or skipped as invalid): it holds no port.
        if (clusterIPs(svc).isEmpty()) return out;
        for (ServiceObject.PortSpec p : svc.ports()) {
            if (p.nodePort() == null || p.nodePort() < 1 || p.nodePort() > 65535) continue;
            try {
                out.add(new Port(Protocol.fromApi(p.protocol()), p.nodePort()));
            } catch (InvalidInputException e) {
                // The builder reports the bad protocol; a port that is not programmed claims nothing.
            }
        }
        Integer hc = svc.healthCheckNodePort();
        if (ProxyStateBuilder.usesHealthCheckNodePort(svc) && hc != null && hc >= 1 && hc <= 65535) {
            out.add(new Port(Protocol.TCP, hc));
        }
        return out;
    }

    private static Set<IpAddress> clusterIPs(ServiceObject svc) {
        return parsed(Stream.concat(svc.clusterIPs().stream(), Stream.ofNullable(svc.clusterIP())));
    }

    private static Set<IpAddress> exposed(ServiceObject svc) {
        return parsed(Stream.concat(svc.externalIPs().stream(),
                svc.loadBalancerIngress().stream().map(ServiceObject.LoadBalancerIngress::ip).filter(Objects::nonNull)));
    }

    /** The addresses among {@code texts}; the rest the builder reports as invalid. */
    private static Set<IpAddress> parsed(Stream<String> texts) {
        Set<IpAddress> out = new HashSet<>();
        for (String t : texts.toList()) {
            try {
                out.add(IpAddress.parse(t));
            } catch (InvalidInputException e) {
                // Not an address: claims nothing.
            }
        }
        return out;
    }

    private static Instant created(String text) {
        if (text == null) return null;
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
