package io.nftproxy.proxy;

import io.nftproxy.net.IpFamily;

import java.util.List;
import java.util.SortedMap;

/**
 * Service ports and their endpoints, of a whole family ({@link ProxyState}) or of one Service
 * ({@link ServiceState}): what health checks and conntrack cleanup read, whichever of the two a sync has at hand.
 */
public interface ServicePortView {
    IpFamily family();

    SortedMap<ServicePortName, ServicePort> servicePorts();

    List<Endpoint> endpointsOf(ServicePortName name);
}
