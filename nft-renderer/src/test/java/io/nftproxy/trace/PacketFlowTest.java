package io.nftproxy.trace;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.service.NodeContext;
import io.nftproxy.net.Protocol;
import io.nftproxy.render.Renderer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static io.nftproxy.TestClusters.NODE;
import static io.nftproxy.TestClusters.OTHER_NODE;
import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.slice6;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Packet flows through the rendered table, checked against the reference's packet-level semantics (section 2.3).
 * One row per flow: where the first packet enters, its addresses, and what must happen to it.
 */
class PacketFlowTest {
    /** One cluster for every row; the address plan is in {@link TraceFixtures}. */
    static ClusterSnapshot snapshot() {
        return cluster()
                .serviceCidr("172.30.0.0/16", "fd00:172:30::/112")
                // ClusterIP, one local and one remote endpoint.
                .with(svc("ns1", "web").clusterIP("172.30.0.10").port("http", "TCP", 80))
                .with(slice("ns1", "web", "web-ipv4").port("http", "TCP", 8080).ready("10.0.1.5", NODE).ready("10.0.2.7", OTHER_NODE))
                // ClusterIP without endpoints.
                .with(svc("ns1", "empty").clusterIP("172.30.0.11").port("http", "TCP", 80))
                // iTP=Local, endpoints only on another node.
                .with(svc("ns1", "itp-local").clusterIP("172.30.0.12").port("http", "TCP", 80).internalLocal())
                .with(slice("ns1", "itp-local", "itp-local-ipv4").port("http", "TCP", 8080).ready("10.0.2.8", OTHER_NODE))
                // NodePort, eTP=Cluster.
                .with(svc("ns1", "np-cluster").clusterIP("172.30.0.20").nodePort("http", "TCP", 80, 30080))
                .with(slice("ns1", "np-cluster", "np-cluster-ipv4").port("http", "TCP", 8080).ready("10.0.1.6", NODE).ready("10.0.2.9", OTHER_NODE))
                // NodePort, eTP=Local, a local and a remote endpoint.
                .with(svc("ns1", "np-local").clusterIP("172.30.0.21").nodePort("http", "TCP", 80, 30081).externalLocal())
                .with(slice("ns1", "np-local", "np-local-ipv4").port("http", "TCP", 8080).ready("10.0.1.7", NODE).ready("10.0.2.10", OTHER_NODE))
                // NodePort, eTP=Local, remote endpoints only.
                .with(svc("ns1", "np-remote").clusterIP("172.30.0.22").nodePort("http", "TCP", 80, 30082).externalLocal())
                .with(slice("ns1", "np-remote", "np-remote-ipv4").port("http", "TCP", 8080).ready("10.0.2.11", OTHER_NODE))
                // NodePort without endpoints.
                .with(svc("ns1", "np-empty").clusterIP("172.30.0.23").nodePort("http", "TCP", 80, 30083))
                // ExternalIP.
                .with(svc("ns1", "ext").clusterIP("172.30.0.30").port("http", "TCP", 80).externalIP("192.0.2.30"))
                .with(slice("ns1", "ext", "ext-ipv4").port("http", "TCP", 8080).ready("10.0.2.12", OTHER_NODE))
                // LoadBalancer with source ranges (NodePort 30084 too).
                .with(svc("ns1", "lb").clusterIP("172.30.0.40").nodePort("http", "TCP", 80, 30084)
                        .loadBalancer("203.0.113.40", "198.51.100.0/25"))
                .with(slice("ns1", "lb", "lb-ipv4").port("http", "TCP", 8080).ready("10.0.2.13", OTHER_NODE))
                // ExternalIP and LB VIP without endpoints.
                .with(svc("ns1", "ext-empty").clusterIP("172.30.0.31").port("http", "TCP", 80).externalIP("192.0.2.31"))
                .with(svc("ns1", "lb-empty").clusterIP("172.30.0.41").nodePort("http", "TCP", 80, 30085).loadBalancer("203.0.113.41"))
                // ExternalIP with eTP=Local and remote endpoints only.
                .with(svc("ns1", "ext-local").clusterIP("172.30.0.32").port("http", "TCP", 80).externalIP("192.0.2.32")
                        .externalLocal())
                .with(slice("ns1", "ext-local", "ext-local-ipv4").port("http", "TCP", 8080).ready("10.0.2.16", OTHER_NODE))
                // iTP=Local with a local and a remote endpoint.
                .with(svc("ns1", "itp-local2").clusterIP("172.30.0.13").port("http", "TCP", 80).internalLocal())
                .with(slice("ns1", "itp-local2", "itp-local2-ipv4").port("http", "TCP", 8080).ready("10.0.1.10", NODE).ready("10.0.2.17", OTHER_NODE))
                // LoadBalancer whose source range covers the node IP: the VIP itself is allowed as a source too.
                .with(svc("ns1", "lb-node").clusterIP("172.30.0.42").port("http", "TCP", 80).loadBalancer("203.0.113.42", "192.168.10.0/24"))
                .with(slice("ns1", "lb-node", "lb-node-ipv4").port("http", "TCP", 8080).ready("10.0.2.18", OTHER_NODE))
                // ClientIP affinity.
                .with(svc("ns1", "sticky").clusterIP("172.30.0.50").port("http", "TCP", 80).clientIPAffinity(300))
                .with(slice("ns1", "sticky", "sticky-ipv4").port("http", "TCP", 8080).ready("10.0.1.8", NODE).ready("10.0.2.14", OTHER_NODE))
                // UDP.
                .with(svc("kube-system", "dns").clusterIP("172.30.0.53").port("dns", "UDP", 53))
                .with(slice("kube-system", "dns", "dns-ipv4").port("dns", "UDP", 53).ready("10.0.1.9", NODE).ready("10.0.2.15", OTHER_NODE))
                // IPv6 ClusterIP.
                .with(svc("ns6", "web6").clusterIP("fd00:172:30::10").port("http", "TCP", 80))
                .with(slice6("ns6", "web6", "web6-ipv6").port("http", "TCP", 8080).ready("fd00:10::1:5", NODE).ready("fd00:10::2:7", OTHER_NODE))
                .snapshot();
    }

    private static final Renderer.Rendering DEFAULT = Renderer.upstream().render(snapshot(), TraceFixtures.node());
    private static final Renderer.Rendering MASQ_ALL = Renderer.upstream().render(snapshot(), TraceFixtures.node(true));
    private static final Renderer.Rendering MATCH_ALL = Renderer.upstream().render(snapshot(), TraceFixtures.nodeMatchAll());
    private static final Renderer.Rendering NO_DETECTOR = Renderer.upstream().render(snapshot(), TraceFixtures.nodeWithoutDetector());

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', textBlock = """
            # scenario                                   ; node     ; origin   ; src              ; dst             ; proto ; dport ; outcome   ; targets                                ; masq ; where
            ClusterIP from a pod                         ; default  ; POD      ; 10.0.1.20        ; 172.30.0.10     ; TCP   ; 80    ; DNAT      ; 10.0.1.5:8080|10.0.2.7:8080            ; no   ;
            ClusterIP from a pod on another node         ; default  ; EXTERNAL ; 10.0.2.20        ; 172.30.0.10     ; TCP   ; 80    ; DNAT      ; 10.0.1.5:8080|10.0.2.7:8080            ; no   ;
            ClusterIP from the host                      ; default  ; HOST     ; 192.168.10.20    ; 172.30.0.10     ; TCP   ; 80    ; DNAT      ; 10.0.1.5:8080|10.0.2.7:8080            ; yes  ;
            ClusterIP from off-node                      ; default  ; EXTERNAL ; 198.51.100.7     ; 172.30.0.10     ; TCP   ; 80    ; DNAT      ; 10.0.1.5:8080|10.0.2.7:8080            ; yes  ;
            ClusterIP from a pod with masqueradeAll      ; masqall  ; POD      ; 10.0.1.20        ; 172.30.0.10     ; TCP   ; 80    ; DNAT      ; 10.0.1.5:8080|10.0.2.7:8080            ; yes  ;
            ClusterIP wrong port                         ; default  ; POD      ; 10.0.1.20        ; 172.30.0.10     ; TCP   ; 81    ; REJECT    ;                                        ;      ; cluster-ips-check
            ClusterIP wrong port from the host           ; default  ; HOST     ; 192.168.10.20    ; 172.30.0.10     ; TCP   ; 81    ; REJECT    ;                                        ;      ; cluster-ips-check
            ClusterIP wrong protocol (UDP to TCP port)   ; default  ; POD      ; 10.0.1.20        ; 172.30.0.10     ; UDP   ; 80    ; REJECT    ;                                        ;      ; cluster-ips-check
            unallocated address in the service CIDR      ; default  ; POD      ; 10.0.1.20        ; 172.30.0.99     ; TCP   ; 80    ; DROP      ;                                        ;      ; cluster-ips-check
            ClusterIP without endpoints                  ; default  ; POD      ; 10.0.1.20        ; 172.30.0.11     ; TCP   ; 80    ; REJECT    ;                                        ;      ; reject-chain
            ClusterIP without endpoints from the host    ; default  ; HOST     ; 192.168.10.20    ; 172.30.0.11     ; TCP   ; 80    ; REJECT    ;                                        ;      ; reject-chain
            iTP=Local with only remote endpoints         ; default  ; POD      ; 10.0.1.20        ; 172.30.0.12     ; TCP   ; 80    ; DROP      ;                                        ;      ; service-endpoints-check
            NodePort eTP=Cluster from off-node           ; default  ; EXTERNAL ; 198.51.100.7     ; 192.168.10.20   ; TCP   ; 30080 ; DNAT      ; 10.0.1.6:8080|10.0.2.9:8080            ; yes  ;
            NodePort eTP=Cluster from a pod              ; default  ; POD      ; 10.0.1.20        ; 192.168.10.20   ; TCP   ; 30080 ; DNAT      ; 10.0.1.6:8080|10.0.2.9:8080            ; yes  ;
            NodePort eTP=Local from off-node             ; default  ; EXTERNAL ; 198.51.100.7     ; 192.168.10.20   ; TCP   ; 30081 ; DNAT      ; 10.0.1.7:8080                          ; no   ;
            NodePort eTP=Local from a pod                ; default  ; POD      ; 10.0.1.20        ; 192.168.10.20   ; TCP   ; 30081 ; DNAT      ; 10.0.1.7:8080|10.0.2.10:8080           ; no   ;
            NodePort eTP=Local from the host             ; default  ; HOST     ; 192.168.10.20    ; 192.168.10.20   ; TCP   ; 30081 ; DNAT      ; 10.0.1.7:8080|10.0.2.10:8080           ; yes  ;
            NodePort eTP=Local no local endpoints        ; default  ; EXTERNAL ; 198.51.100.7     ; 192.168.10.20   ; TCP   ; 30082 ; DROP      ;                                        ;      ; nodeport-endpoints-check
            NodePort eTP=Local no local, from a pod      ; default  ; POD      ; 10.0.1.20        ; 192.168.10.20   ; TCP   ; 30082 ; DNAT      ; 10.0.2.11:8080                         ; no   ;
            NodePort without endpoints                   ; default  ; EXTERNAL ; 198.51.100.7     ; 192.168.10.20   ; TCP   ; 30083 ; REJECT    ;                                        ;      ; reject-chain
            NodePort without endpoints from the host     ; default  ; HOST     ; 192.168.10.20    ; 192.168.10.20   ; TCP   ; 30083 ; REJECT    ;                                        ;      ; reject-chain
            NodePort on an address outside nodeport-ips  ; default  ; EXTERNAL ; 198.51.100.7     ; 127.0.0.1       ; TCP   ; 30080 ; UNTOUCHED ;                                        ; no   ;
            unknown port on the node                     ; default  ; EXTERNAL ; 198.51.100.7     ; 192.168.10.20   ; TCP   ; 22    ; UNTOUCHED ;                                        ; no   ;
            NodePort eTP=Local no local, from the host   ; default  ; HOST     ; 192.168.10.20    ; 192.168.10.20   ; TCP   ; 30082 ; DNAT      ; 10.0.2.11:8080                         ; yes  ;
            LB VIP from the host, range excludes node    ; default  ; HOST     ; 192.168.10.20    ; 203.0.113.40    ; TCP   ; 80    ; DROP      ;                                        ;      ; firewall-
            externalIP from off-node                     ; default  ; EXTERNAL ; 198.51.100.7     ; 192.0.2.30      ; TCP   ; 80    ; DNAT      ; 10.0.2.12:8080                         ; yes  ;
            externalIP from a pod                        ; default  ; POD      ; 10.0.1.20        ; 192.0.2.30      ; TCP   ; 80    ; DNAT      ; 10.0.2.12:8080                         ; yes  ;
            LB VIP from an allowed source                ; default  ; EXTERNAL ; 198.51.100.7     ; 203.0.113.40    ; TCP   ; 80    ; DNAT      ; 10.0.2.13:8080                         ; yes  ;
            LB VIP from a denied source                  ; default  ; EXTERNAL ; 198.51.100.200   ; 203.0.113.40    ; TCP   ; 80    ; DROP      ;                                        ;      ; firewall-
            LB VIP from a pod (not in the ranges)        ; default  ; POD      ; 10.0.1.20        ; 203.0.113.40    ; TCP   ; 80    ; DROP      ;                                        ;      ; firewall-
            LB NodePort bypasses source ranges           ; default  ; EXTERNAL ; 198.51.100.200   ; 192.168.10.20   ; TCP   ; 30084 ; DNAT      ; 10.0.2.13:8080                         ; yes  ;
            hairpin: pod to its own service             ; default  ; POD      ; 10.0.1.5         ; 172.30.0.10     ; TCP   ; 80    ; DNAT      ; 10.0.1.5:8080|10.0.2.7:8080            ; 10.0.1.5:8080=yes|10.0.2.7:8080=no ;
            session affinity from a pod                  ; default  ; POD      ; 10.0.1.20        ; 172.30.0.50     ; TCP   ; 80    ; DNAT      ; 10.0.1.8:8080|10.0.2.14:8080           ; no   ;
            session affinity from off-node               ; default  ; EXTERNAL ; 198.51.100.7     ; 172.30.0.50     ; TCP   ; 80    ; DNAT      ; 10.0.1.8:8080|10.0.2.14:8080           ; yes  ;
            UDP ClusterIP from a pod                     ; default  ; POD      ; 10.0.1.20        ; 172.30.0.53     ; UDP   ; 53    ; DNAT      ; 10.0.1.9:53|10.0.2.15:53               ; no   ;
            UDP ClusterIP from the host                  ; default  ; HOST     ; 192.168.10.20    ; 172.30.0.53     ; UDP   ; 53    ; DNAT      ; 10.0.1.9:53|10.0.2.15:53               ; yes  ;
            TCP to a UDP-only ClusterIP port             ; default  ; POD      ; 10.0.1.20        ; 172.30.0.53     ; TCP   ; 53    ; REJECT    ;                                        ;      ; cluster-ips-check
            externalIP without endpoints                 ; default  ; EXTERNAL ; 198.51.100.7     ; 192.0.2.31      ; TCP   ; 80    ; REJECT    ;                                        ;      ; reject-chain
            LB VIP without endpoints                     ; default  ; EXTERNAL ; 198.51.100.7     ; 203.0.113.41    ; TCP   ; 80    ; REJECT    ;                                        ;      ; reject-chain
            LB NodePort without endpoints                ; default  ; EXTERNAL ; 198.51.100.7     ; 192.168.10.20   ; TCP   ; 30085 ; REJECT    ;                                        ;      ; reject-chain
            externalIP eTP=Local no local endpoints      ; default  ; EXTERNAL ; 198.51.100.7     ; 192.0.2.32      ; TCP   ; 80    ; DROP      ;                                        ;      ; service-endpoints-check
            externalIP eTP=Local no local, from a pod    ; default  ; POD      ; 10.0.1.20        ; 192.0.2.32      ; TCP   ; 80    ; DNAT      ; 10.0.2.16:8080                         ; no   ;
            iTP=Local uses only the local endpoint       ; default  ; POD      ; 10.0.1.20        ; 172.30.0.13     ; TCP   ; 80    ; DNAT      ; 10.0.1.10:8080                         ; no   ;
            LB range covering the node allows the VIP    ; default  ; EXTERNAL ; 203.0.113.42     ; 203.0.113.42    ; TCP   ; 80    ; DNAT      ; 10.0.2.18:8080                         ; yes  ;
            LB range covering the node, other source     ; default  ; EXTERNAL ; 198.51.100.7     ; 203.0.113.42    ; TCP   ; 80    ; DROP      ;                                        ;      ; firewall-
            LB range covering the node, node source      ; default  ; EXTERNAL ; 192.168.10.21    ; 203.0.113.42    ; TCP   ; 80    ; DNAT      ; 10.0.2.18:8080                         ; yes  ;
            MatchAll NodePort on the node IP             ; matchall ; EXTERNAL ; 198.51.100.7     ; 192.168.10.20   ; TCP   ; 30080 ; DNAT      ; 10.0.1.6:8080|10.0.2.9:8080            ; yes  ;
            MatchAll NodePort on loopback is not served  ; matchall ; HOST     ; 127.0.0.1        ; 127.0.0.1       ; TCP   ; 30080 ; UNTOUCHED ;                                        ; no   ;
            MatchAll NodePort without endpoints          ; matchall ; EXTERNAL ; 198.51.100.7     ; 192.168.10.20   ; TCP   ; 30083 ; REJECT    ;                                        ;      ; reject-chain
            MatchAll NodePort eTP=Local no local         ; matchall ; EXTERNAL ; 198.51.100.7     ; 192.168.10.20   ; TCP   ; 30082 ; DROP      ;                                        ;      ; nodeport-endpoints-check
            no detector: ClusterIP from off-node         ; nodetect ; EXTERNAL ; 198.51.100.7     ; 172.30.0.10     ; TCP   ; 80    ; DNAT      ; 10.0.1.5:8080|10.0.2.7:8080            ; no   ;
            no detector: ClusterIP from the host         ; nodetect ; HOST     ; 192.168.10.20    ; 172.30.0.10     ; TCP   ; 80    ; DNAT      ; 10.0.1.5:8080|10.0.2.7:8080            ; no   ;
            no detector: hairpin still masquerades       ; nodetect ; POD      ; 10.0.1.5         ; 172.30.0.10     ; TCP   ; 80    ; DNAT      ; 10.0.1.5:8080|10.0.2.7:8080            ; 10.0.1.5:8080=yes|10.0.2.7:8080=no ;
            no detector: eTP=Local NodePort from a pod   ; nodetect ; POD      ; 10.0.1.20        ; 192.168.10.20   ; TCP   ; 30081 ; DNAT      ; 10.0.1.7:8080                          ; no   ;
            IPv6 ClusterIP from a pod                    ; default  ; POD      ; fd00:10::1:20    ; fd00:172:30::10 ; TCP   ; 80    ; DNAT      ; [fd00:10::1:5]:8080|[fd00:10::2:7]:8080 ; no   ;
            IPv6 ClusterIP from off-node                 ; default  ; EXTERNAL ; 2001:db8::7      ; fd00:172:30::10 ; TCP   ; 80    ; DNAT      ; [fd00:10::1:5]:8080|[fd00:10::2:7]:8080 ; yes  ;
            IPv6 hairpin                                 ; default  ; POD      ; fd00:10::1:5     ; fd00:172:30::10 ; TCP   ; 80    ; DNAT      ; [fd00:10::1:5]:8080|[fd00:10::2:7]:8080 ; [fd00:10::1:5]:8080=yes|[fd00:10::2:7]:8080=no ;
            IPv6 wrong port                              ; default  ; POD      ; fd00:10::1:20    ; fd00:172:30::10 ; TCP   ; 81    ; REJECT    ;                                        ;      ; cluster-ips-check
            IPv6 unallocated service address             ; default  ; POD      ; fd00:10::1:20    ; fd00:172:30::99 ; TCP   ; 80    ; DROP      ;                                        ;      ; cluster-ips-check
            """)
    void packetFlows(String scenario, String nodeKind, Origin origin, String src, String dst, Protocol proto, int dport,
                     Outcome.Kind kind, String targets, String masq, String where) {
        Renderer.Rendering rendering;
        NodeContext node;
        switch (nodeKind) {
            case "default" -> { rendering = DEFAULT; node = TraceFixtures.node(); }
            case "masqall" -> { rendering = MASQ_ALL; node = TraceFixtures.node(true); }
            case "matchall" -> { rendering = MATCH_ALL; node = TraceFixtures.nodeMatchAll(); }
            case "nodetect" -> { rendering = NO_DETECTOR; node = TraceFixtures.nodeWithoutDetector(); }
            default -> throw new IllegalArgumentException("node kind " + nodeKind);
        }
        Packet packet = Packet.of(origin, src, dst, proto, dport);
        Trace trace = PacketTracer.trace(rendering.table(packet.dst().family()), node, packet);
        String explain = "\n" + trace.render();
        Outcome o = trace.outcome();
        assertEquals(kind, o.kind(), explain);
        if (o instanceof Outcome.Dnat d) {
            assertEquals(List.of(targets.split("\\|")), d.hostPorts(), explain);
            assertEquals(masq, d.masqueradeSummary(), explain);
        } else if (o instanceof Outcome.Untouched u) {
            assertEquals(masq, u.masquerade().applied() ? "yes" : "no", explain);
        } else if (o instanceof Outcome.Reject r) {
            assertTrue(r.chain().startsWith(where), "rejected in " + r.chain() + explain);
        } else if (o instanceof Outcome.Drop dr) {
            assertTrue(dr.chain().startsWith(where), "dropped in " + dr.chain() + explain);
        }
    }
}
