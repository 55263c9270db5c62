package io.nftproxy.conntrack;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ServiceFlowIndexTest {
    private static final ServiceFlowIndex INDEX = ServiceFlowIndex.of(StaleFlowFilterTest.state(), null);

    @ParameterizedTest(name = "{0} to {1}:{2} answered by {3}: {4}")
    @CsvSource(delimiter = '|', nullValues = "-", textBlock = """
            # proto | orig dst      | dport | reply src     | service port                   | via
            udp     | 172.30.0.10   | 53    | 10.0.1.1      | kube-system/dns:dns/UDP         | CLUSTER_IP
            tcp     | 172.30.0.10   | 53    | 10.0.1.1      | kube-system/dns:dns-tcp/TCP     | CLUSTER_IP
            udp     | 172.30.0.10   | 53    | 172.30.0.10   | kube-system/dns:dns/UDP         | CLUSTER_IP
            udp     | 192.0.2.10    | 53    | 10.0.1.1      | kube-system/dns:dns/UDP         | EXTERNAL_IP
            udp     | 203.0.113.10  | 53    | 10.0.1.1      | kube-system/dns:dns/UDP         | LOAD_BALANCER_IP
            udp     | 192.168.10.20 | 30053 | 10.0.1.1      | kube-system/dns:dns/UDP         | NODE_PORT
            tcp     | 192.168.10.20 | 30080 | 10.0.3.1      | default/web:http/TCP            | NODE_PORT
            tcp     | 198.51.100.9  | 30080 | 198.51.100.9  | -                               | -
            tcp     | 172.30.0.10   | 5353  | 10.0.1.1      | -                               | -
            sctp    | 172.30.0.10   | 53    | 10.0.1.1      | -                               | -
            udp     | 10.0.1.1      | 5353  | 10.0.1.1      | -                               | -
            """)
    void findsTheServicePort(String proto, String dst, int dport, String replySrc, String service, String via) {
        int p = proto.equals("udp") ? FlowEntry.UDP : proto.equals("tcp") ? FlowEntry.TCP : FlowEntry.SCTP;
        // Not DNATed: the reply comes from exactly the address and port the client used.
        int replyPort = replySrc.equals(dst) ? dport : 5353;
        FlowEntry flow = FlowEntry.of(p, "10.0.5.5", 40000, dst, dport, replySrc, replyPort);
        Optional<ServiceFlow> m = INDEX.match(flow);
        assertEquals(Optional.ofNullable(service), m.map(f -> f.service().toString()), flow.toString());
        assertEquals(Optional.ofNullable(via), m.map(f -> f.via().name()), flow.toString());
    }
}
