package io.nftproxy.proxy;

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

    @Override public int compareTo(ServicePortName o) { return ORDER.compare(this, o); }

    @Override public String toString() { return elementComment() + "/" + protocol; }
}
