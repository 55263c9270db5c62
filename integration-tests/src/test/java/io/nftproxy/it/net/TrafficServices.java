package io.nftproxy.it.net;

import io.nftproxy.TestAddresses;
import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;

import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.slice6;
import static io.nftproxy.TestClusters.svc;
import static io.nftproxy.TestAddresses.*;
import static io.nftproxy.it.net.TestNetworks.*;

/**
 * The Services the traffic tests send to, one per behaviour, all backed by the {@link EchoServer}s of
 * {@link Topology}: pod-a and pod-b on this node, the remote pod on {@link TestAddresses#OTHER_NODE}.
 */
public final class TrafficServices {
    private TrafficServices() {}

    public static final int HTTP = 80;
    public static final int DNS = 53;

    /** ClusterIP + NodePort + externalIP, externalTrafficPolicy Cluster, three backends. */
    public static final String WEB = "172.30.0.10";
    public static final int WEB_NODE_PORT = 30080;
    /** The IPv6 ClusterIPs of the dual-stack Services {@code web}, {@code empty} and {@code dns}. */
    public static final String WEB6 = "fd00:172:30::10";
    public static final String EMPTY6 = "fd00:172:30::14";
    public static final String DNS_SVC6 = "fd00:172:30::53";
    /** NodePort with externalTrafficPolicy Local, three backends (two local). */
    public static final String WEB_LOCAL = "172.30.0.11";
    public static final int WEB_LOCAL_NODE_PORT = 30081;
    /** Both traffic policies Local, and its only endpoint on the remote node. */
    public static final String REMOTE_ONLY = "172.30.0.12";
    public static final int REMOTE_ONLY_NODE_PORT = 30082;
    /** internalTrafficPolicy Local, three backends (two local). */
    public static final String INTERNAL_LOCAL = "172.30.0.13";
    /** A Service with no endpoints at all. */
    public static final String EMPTY = "172.30.0.14";
    /** A Service whose only endpoint is pod-a, for pod-a to call itself through. */
    public static final String HAIRPIN = "172.30.0.15";
    /** ClientIP session affinity, three backends. */
    public static final String STICKY = "172.30.0.16";
    /** LoadBalancer with VIP {@link TestAddresses#LB_VIP} and loadBalancerSourceRanges {@link TestAddresses#ALLOWED_SOURCE_RANGE}. */
    public static final String LB = "172.30.0.17";
    public static final int LB_NODE_PORT = 30083;
    /** UDP port 53 to the backends' {@link TestNetworks#BACKEND_UDP_PORT}. */
    public static final String DNS_SVC = "172.30.0.53";
    /** Inside the ServiceCIDR, allocated to no Service. */
    public static final String UNALLOCATED = "172.30.0.99";

    public static ClusterSnapshot snapshot() {
        TestClusters c = TestClusters.cluster().serviceCidr(SERVICE_CIDR, SERVICE_CIDR6);
        c.service(svc("default", "web").type("NodePort").dualStack(WEB, WEB6).port("http", "TCP", HTTP, WEB_NODE_PORT)
                .externalIP(EXTERNAL_IP).build());
        c.slice(allBackends("web"));
        c.slice(slice6("default", "web", "web-v6").port("http", "TCP", BACKEND_TCP_PORT)
                .ready(POD_A6, NODE).ready(POD_B6, NODE).ready(OTHER_POD6, OTHER_NODE).build());
        c.service(svc("default", "web-local").type("NodePort").clusterIP(WEB_LOCAL)
                .port("http", "TCP", HTTP, WEB_LOCAL_NODE_PORT).externalLocal().build());
        c.slice(allBackends("web-local"));
        c.service(svc("default", "remote-only").type("NodePort").clusterIP(REMOTE_ONLY)
                .port("http", "TCP", HTTP, REMOTE_ONLY_NODE_PORT).externalLocal().internalLocal().build());
        c.slice(slice("default", "remote-only", "remote-only-1").port("http", "TCP", BACKEND_TCP_PORT)
                .ready(OTHER_POD, OTHER_NODE).build());
        c.service(svc("default", "internal-local").clusterIP(INTERNAL_LOCAL).port("http", "TCP", HTTP).internalLocal().build());
        c.slice(allBackends("internal-local"));
        c.service(svc("default", "empty").dualStack(EMPTY, EMPTY6).port("http", "TCP", HTTP).build());
        c.service(svc("default", "hairpin").clusterIP(HAIRPIN).port("http", "TCP", HTTP).build());
        c.slice(slice("default", "hairpin", "hairpin-1").port("http", "TCP", BACKEND_TCP_PORT).ready(POD_A, NODE).build());
        c.service(svc("default", "sticky").clusterIP(STICKY).port("http", "TCP", HTTP).clientIPAffinity(10800).build());
        c.slice(allBackends("sticky"));
        c.service(svc("default", "lb").type("LoadBalancer").clusterIP(LB).port("http", "TCP", HTTP, LB_NODE_PORT)
                .lbIngress(LB_VIP).sourceRange(ALLOWED_SOURCE_RANGE).build());
        c.slice(allBackends("lb"));
        c.service(svc("default", "dns").dualStack(DNS_SVC, DNS_SVC6).port("dns", "UDP", DNS).build());
        c.slice(slice("default", "dns", "dns-1").port("dns", "UDP", BACKEND_UDP_PORT)
                .ready(POD_A, NODE).ready(POD_B, NODE).ready(OTHER_POD, OTHER_NODE).build());
        c.slice(slice6("default", "dns", "dns-v6").port("dns", "UDP", BACKEND_UDP_PORT)
                .ready(POD_A6, NODE).ready(POD_B6, NODE).ready(OTHER_POD6, OTHER_NODE).build());
        return c.snapshot();
    }

    private static EndpointSliceObject allBackends(String service) {
        return slice("default", service, service + "-1").port("http", "TCP", BACKEND_TCP_PORT)
                .ready(POD_A, NODE).ready(POD_B, NODE).ready(OTHER_POD, OTHER_NODE).build();
    }
}
