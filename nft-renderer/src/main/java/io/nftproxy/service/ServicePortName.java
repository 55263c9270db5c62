package io.nftproxy.service;

import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.Protocol;

import java.util.Comparator;

/** Identifies one port of one Service: namespace, service, port name (may be empty) and protocol. Validated. */
public record ServicePortName(String namespace, String name, String port, Protocol protocol)
        implements Comparable<ServicePortName> {

    private static final Comparator<ServicePortName> ORDER = Comparator.comparing(ServicePortName::namespace)
            .thenComparing(ServicePortName::name).thenComparing(ServicePortName::port)
            .thenComparing(ServicePortName::protocol);

    public ServicePortName {
        Names.namespace(namespace);
        Names.serviceName(name);
        port = Names.portName(port, "port name");
        if (protocol == null) throw new InvalidInputException("protocol", null, "one of TCP, UDP, SCTP");
    }

    /** {@code ns/svc} */
    public String serviceKey() { return namespace + "/" + name; }

    /** Element comments as upstream: {@code ns/svc:port}, or {@code ns/svc} for an unnamed port. */
    public String elementComment() { return port.isEmpty() ? serviceKey() : serviceKey() + ":" + port; }

    /** The base of the chain names: {@code ns/svc/proto/port}. */
    public String chainBase() { return namespace + "/" + name + "/" + protocol.nftName() + "/" + port; }

    /**
     * The record's default hash combines the string hashes linearly, so "svc1".."svc50000" across a few namespaces
     * collide in clusters and the open-addressing maps of {@link ProxyState} degrade to long probes; mix it.
     */
    @Override public int hashCode() {
        int h = ((namespace.hashCode() * 31 + name.hashCode()) * 31 + port.hashCode()) * 31 + protocol.ordinal();
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        return h ^ (h >>> 16);
    }

    @Override public boolean equals(Object o) {
        return this == o || (o instanceof ServicePortName n && protocol == n.protocol && name.equals(n.name)
                && namespace.equals(n.namespace) && port.equals(n.port));
    }

    @Override public int compareTo(ServicePortName o) { return ORDER.compare(this, o); }

    @Override public String toString() { return elementComment() + "/" + protocol; }
}
