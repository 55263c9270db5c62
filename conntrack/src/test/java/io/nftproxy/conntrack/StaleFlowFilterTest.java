package io.nftproxy.conntrack;

import io.nftproxy.TestClusters;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ProxyStateBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Set;

import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.slice6;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StaleFlowFilterTest {
    /**
     * kube-system/dns: LoadBalancer, ClusterIP 172.30.0.10, externalIP 192.0.2.10, VIP 203.0.113.10; UDP 53 with
     * NodePort 30053 and TCP 53. Endpoints: 10.0.1.1 ready, 10.0.1.2 serving+terminating, 10.0.1.3 terminating and
     * not serving. kube-system/syslog: UDP 514 on 172.30.0.20 and a second UDP port 1514 whose only endpoint is
     * 10.0.2.2 (a named targetPort on one pod). default/empty: UDP 9999 on 172.30.0.30, no endpoints.
     * default/web: TCP only.
     */
    static ProxyState state() {
        return ProxyStateBuilder.build(cluster()
                .service(svc("kube-system", "dns").type("LoadBalancer").clusterIP("172.30.0.10")
                        .port("dns", "UDP", 53, 30053).port("dns-tcp", "TCP", 53, 30054)
                        .externalIP("192.0.2.10").lbIngress("203.0.113.10").build())
                .slice(slice("kube-system", "dns", "dns-1").port("dns", "UDP", 5353).port("dns-tcp", "TCP", 5353)
                        .ready("10.0.1.1", TestClusters.NODE)
                        .endpoint("10.0.1.2", false, true, true, TestClusters.NODE)
                        .endpoint("10.0.1.3", false, false, true, TestClusters.OTHER_NODE).build())
                .service(svc("kube-system", "syslog").clusterIP("172.30.0.20")
                        .port("syslog", "UDP", 514).port("tls", "UDP", 1514).build())
                .slice(slice("kube-system", "syslog", "syslog-1").port("syslog", "UDP", 514)
                        .ready("10.0.2.1", TestClusters.NODE).ready("10.0.2.2", TestClusters.NODE).build())
                .slice(slice("kube-system", "syslog", "syslog-2").port("tls", "UDP", 1514)
                        .ready("10.0.2.2", TestClusters.NODE).build())
                .service(svc("default", "empty").clusterIP("172.30.0.30").port("p", "UDP", 9999).build())
                .service(svc("default", "web").clusterIP("172.30.0.40").port("http", "TCP", 80, 30080).build())
                .slice(slice("default", "web", "web-1").port("http", "TCP", 8080).ready("10.0.3.1", TestClusters.NODE).build())
                .snapshot(), IpFamily.IPV4, TestClusters.NODE);
    }

    private static final StaleFlowFilter FILTER = StaleFlowFilter.of(state());

    @ParameterizedTest(name = "{0} to {1}:{2} answered by {3}:{4}: stale={5}")
    @CsvSource(delimiter = '|', textBlock = """
            # proto | orig dst     | dport | reply src    | sport | stale | why
            udp     | 172.30.0.10  | 53    | 10.0.1.1     | 5353  | false | ready endpoint
            udp     | 172.30.0.10  | 53    | 10.0.1.2     | 5353  | false | serving though terminating: still in use
            udp     | 172.30.0.10  | 53    | 10.0.1.3     | 5353  | true  | terminating and not serving
            udp     | 172.30.0.10  | 53    | 10.0.9.9     | 5353  | true  | endpoint gone
            udp     | 172.30.0.10  | 53    | 10.0.1.1     | 5300  | true  | the pod serves, but no longer that port (targetPort changed)
            udp     | 172.30.0.10  | 53    | 172.30.0.10  | 53    | true  | made while there were no endpoints (0 to N)
            udp     | 192.0.2.10   | 53    | 10.0.9.9     | 5353  | true  | externalIP, endpoint gone
            udp     | 192.0.2.10   | 53    | 10.0.1.1     | 5353  | false | externalIP, endpoint alive
            udp     | 203.0.113.10 | 53    | 10.0.9.9     | 5353  | true  | LoadBalancer VIP, endpoint gone
            udp     | 203.0.113.10 | 53    | 10.0.1.2     | 5353  | false | LoadBalancer VIP, serving endpoint
            udp     | 192.168.10.20| 30053 | 10.0.9.9     | 5353  | true  | NodePort on the node IP, endpoint gone
            udp     | 198.51.100.7 | 30053 | 10.0.9.9     | 5353  | true  | NodePort matches on any destination, as upstream
            udp     | 192.168.10.20| 30053 | 10.0.1.1     | 5353  | false | NodePort, endpoint alive
            udp     | 192.168.10.20| 30053 | 10.0.1.1     | 8080  | true  | NodePort, the endpoint's old targetPort (upstream's e2e test)
            udp     | 192.168.10.20| 30053 | 192.168.10.20| 30053 | true  | NodePort flow made while there were no endpoints
            udp     | 172.30.0.20  | 514   | 10.0.2.1     | 514   | false | first port of syslog
            udp     | 172.30.0.20  | 1514  | 10.0.2.1     | 514   | true  | 10.0.2.1 serves 514 but not 1514
            udp     | 172.30.0.20  | 1514  | 10.0.2.2     | 1514  | false | the one endpoint of 1514
            udp     | 172.30.0.20  | 1514  | 10.0.2.2     | 514   | true  | 10.0.2.2 answering on its 514 is not 1514's endpoint
            udp     | 172.30.0.30  | 9999  | 10.0.9.9     | 9999  | true  | no endpoints left at all (#139628)
            udp     | 172.30.0.30  | 9999  | 172.30.0.30  | 9999  | true  | no endpoints, never DNATed
            udp     | 172.30.0.10  | 5353  | 10.0.9.9     | 5353  | false | not a service port of that address
            udp     | 172.30.0.99  | 53    | 10.0.9.9     | 5353  | false | not a service address
            udp     | 10.0.1.1     | 5353  | 10.0.1.1     | 5353  | false | pod to pod, no service
            tcp     | 172.30.0.10  | 53    | 10.0.9.9     | 5353  | false | TCP is never touched
            tcp     | 172.30.0.40  | 80    | 10.0.9.9     | 8080  | false | TCP service, endpoint gone: still never
            tcp     | 192.168.10.20| 30080 | 10.0.9.9     | 8080  | false | TCP NodePort
            sctp    | 172.30.0.10  | 53    | 10.0.9.9     | 5353  | false | SCTP is never touched
            """)
    void decidesLikeUpstream(String proto, String dst, int dport, String replySrc, int replySport, boolean stale, String why) {
        int p = proto.equals("udp") ? FlowEntry.UDP : proto.equals("tcp") ? FlowEntry.TCP : FlowEntry.SCTP;
        FlowEntry flow = FlowEntry.of(p, "10.0.5.5", 40000, dst, dport, replySrc, replySport);
        assertEquals(stale, FILTER.isStale(flow), why + ": " + flow);
    }

    @Test
    void mapsOnlyUdpServicePortsToServingEndpoints() {
        var byAddress = FILTER.servingByServiceAddress();
        Set<StaleFlowFilter.AddressPort> dns = Set.of(key("10.0.1.1", 5353), key("10.0.1.2", 5353));
        assertEquals(dns, byAddress.get(key("172.30.0.10", 53)));
        assertEquals(dns, byAddress.get(key("192.0.2.10", 53)));
        assertEquals(dns, byAddress.get(key("203.0.113.10", 53)));
        assertEquals(Set.of(key("10.0.2.2", 1514)), byAddress.get(key("172.30.0.20", 1514)));
        assertEquals(Set.of(), byAddress.get(key("172.30.0.30", 9999)));
        assertFalse(byAddress.containsKey(key("172.30.0.40", 80)), "TCP service");
        assertEquals(6, byAddress.size(), byAddress.toString());
        assertEquals(Set.of(30053), FILTER.servingByNodePort().keySet());
        assertEquals(dns, FILTER.servingByNodePort().get(30053));
    }

    @Test
    void aFlowOfTheOtherFamilyIsNeverStale() {
        FlowEntry v6 = FlowEntry.of(FlowEntry.UDP, "fd00:10::5", 40000, "fd00:172:30::10", 53, "fd00:10::99", 5353);
        assertFalse(FILTER.isStale(v6));
    }

    @Test
    void ipv6FlowsAreJudgedByTheIpv6State() {
        ProxyState v6 = ProxyStateBuilder.build(cluster()
                .service(svc("kube-system", "dns").dualStack("172.30.0.10", "fd00:172:30::10").port("dns", "UDP", 53).build())
                .slice(slice6("kube-system", "dns", "dns-6").port("dns", "UDP", 5353).ready("fd00:10::1", TestClusters.NODE).build())
                .snapshot(), IpFamily.IPV6, TestClusters.NODE);
        StaleFlowFilter f = StaleFlowFilter.of(v6);
        assertTrue(f.isStale(FlowEntry.of(FlowEntry.UDP, "fd00:10::5", 40000, "fd00:172:30::10", 53, "fd00:10::99", 5353)));
        assertFalse(f.isStale(FlowEntry.of(FlowEntry.UDP, "fd00:10::5", 40000, "fd00:172:30::10", 53, "fd00:10::1", 5353)));
    }

    @Test
    void aStateWithoutUdpPortsHasNothingToClean() {
        ProxyState tcpOnly = ProxyStateBuilder.build(cluster()
                .service(svc("default", "web").clusterIP("172.30.0.40").port("http", "TCP", 80).build())
                .snapshot(), IpFamily.IPV4, TestClusters.NODE);
        assertTrue(StaleFlowFilter.of(tcpOnly).isEmpty());
        assertFalse(FILTER.isEmpty());
    }

    @Test
    void aCleanupIsDueOnlyWhenUdpServingEndpointsChanged() {
        assertTrue(FILTER.changedSince(null), "first sync");
        assertFalse(StaleFlowFilter.of(state()).changedSince(FILTER), "same state");
        ProxyState moreTcp = ProxyStateBuilder.build(cluster()
                .service(svc("default", "web").clusterIP("172.30.0.40").port("http", "TCP", 80).build())
                .slice(slice("default", "web", "web-1").port("http", "TCP", 8080).ready("10.0.3.9", TestClusters.NODE).build())
                .snapshot(), IpFamily.IPV4, TestClusters.NODE);
        ProxyState noTcp = ProxyStateBuilder.build(cluster().snapshot(), IpFamily.IPV4, TestClusters.NODE);
        assertFalse(StaleFlowFilter.of(moreTcp).changedSince(StaleFlowFilter.of(noTcp)), "TCP endpoints do not count");
        ProxyState oneDnsEndpointLess = ProxyStateBuilder.build(cluster()
                .service(svc("kube-system", "dns").clusterIP("172.30.0.10").port("dns", "UDP", 53).build())
                .slice(slice("kube-system", "dns", "dns-1").port("dns", "UDP", 5353).ready("10.0.1.1", TestClusters.NODE).build())
                .snapshot(), IpFamily.IPV4, TestClusters.NODE);
        ProxyState twoDns = ProxyStateBuilder.build(cluster()
                .service(svc("kube-system", "dns").clusterIP("172.30.0.10").port("dns", "UDP", 53).build())
                .slice(slice("kube-system", "dns", "dns-1").port("dns", "UDP", 5353).ready("10.0.1.1", TestClusters.NODE)
                        .ready("10.0.1.2", TestClusters.NODE).build())
                .snapshot(), IpFamily.IPV4, TestClusters.NODE);
        assertTrue(StaleFlowFilter.of(oneDnsEndpointLess).changedSince(StaleFlowFilter.of(twoDns)), "UDP endpoint removed");
        ProxyState targetPortChanged = ProxyStateBuilder.build(cluster()
                .service(svc("kube-system", "dns").clusterIP("172.30.0.10").port("dns", "UDP", 53).build())
                .slice(slice("kube-system", "dns", "dns-1").port("dns", "UDP", 5300).ready("10.0.1.1", TestClusters.NODE).build())
                .snapshot(), IpFamily.IPV4, TestClusters.NODE);
        assertTrue(StaleFlowFilter.of(targetPortChanged).changedSince(StaleFlowFilter.of(oneDnsEndpointLess)),
                "same pod, new targetPort: its flows to the old port must be judged again");
    }

    private static IpAddress ip(String s) { return IpAddress.parse(s); }

    private static StaleFlowFilter.AddressPort key(String ip, int port) { return new StaleFlowFilter.AddressPort(ip(ip), port); }
}
