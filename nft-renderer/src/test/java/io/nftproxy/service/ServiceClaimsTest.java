package io.nftproxy.service;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.Protocol;
import io.nftproxy.nft.Capabilities;

import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.nft.Transaction;
import io.nftproxy.render.Renderer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Two Services claiming one node port: the older keeps it, whatever the order, and the other is told why. */
class ServiceClaimsTest {
    private static final ServicePortName OLD = new ServicePortName("a", "old", "", Protocol.TCP);
    private static final ServicePortName YOUNG = new ServicePortName("a", "young", "", Protocol.TCP);

    private static ServiceObject nodePortSvc(String name, String ip, String proto, int nodePort, String created) {
        TestClusters.Svc s = svc("a", name).type("NodePort").clusterIP(ip).port("", proto, 80, nodePort);
        if (created != null) s.created(created);
        return s.build();
    }

    private static ServiceObject lbLocal(String name, String ip, int nodePort, int hcnp, String created) {
        return svc("a", name).type("LoadBalancer").clusterIP(ip).port("", "TCP", 80, nodePort).externalLocal()
                .healthCheckNodePort(hcnp).created(created).build();
    }

    private static ProxyState state(ServiceObject... services) {
        TestClusters c = TestClusters.cluster();
        for (ServiceObject s : services) c.service(s);
        return ProxyStateBuilder.build(c.snapshot(), IpFamily.IPV4, TestClusters.NODE);
    }

    @Test
    void theOlderServiceKeepsANodePortWhateverTheOrder() {
        // "young" sorts after "old" by name too; make the younger one sort first by name to prove age decides.
        ServiceObject older = nodePortSvc("zz-old", "172.30.0.1", "TCP", 30050, "2024-01-01T00:00:00Z");
        ServiceObject younger = nodePortSvc("aa-young", "172.30.0.2", "TCP", 30050, "2025-06-01T00:00:00Z");
        for (List<ServiceObject> order : List.of(List.of(older, younger), List.of(younger, older))) {
            ProxyState st = state(order.toArray(ServiceObject[]::new));
            assertEquals(30050, port(st, "zz-old").nodePort());
            assertEquals(0, port(st, "aa-young").nodePort(), "the younger loses its nodePort");
            assertEquals(80, port(st, "aa-young").port(), "but keeps its ClusterIP port");
            List<Diagnostic> d = st.diagnostics();
            assertEquals(1, d.size(), d.toString());
            assertEquals("a/aa-young", d.get(0).object());
            assertEquals("spec.ports.nodePort", d.get(0).field());
            assertTrue(d.get(0).reason().contains("30050/TCP") && d.get(0).reason().contains("a/zz-old"), d.get(0).reason());
        }
    }

    @Test
    void theRenderedTableHasTheNodePortOnceForTheOlderService() {
        ClusterSnapshot snap = TestClusters.cluster()
                .service(nodePortSvc("old", "172.30.0.1", "TCP", 30050, "2024-01-01T00:00:00Z"))
                .service(nodePortSvc("young", "172.30.0.2", "TCP", 30050, "2025-01-01T00:00:00Z")).snapshot();
        Renderer.Rendering r = Renderer.upstream().render(snap, TestClusters.node());
        String script = Transaction.creating(r.table(IpFamily.IPV4)).script(Capabilities.baseline());
        List<String> lines = script.lines().filter(l -> l.contains("add element") && l.contains("tcp . 30050")).toList();
        assertEquals(1, lines.size(), script);
        assertTrue(lines.get(0).contains("a/old"), lines.get(0));
        assertEquals(1, r.diagnostics().size(), "one family-independent warning, not one per family");
    }

    @Test
    void withoutTimestampsNamespaceAndNameDecide() {
        ProxyState st = state(nodePortSvc("b", "172.30.0.2", "UDP", 30053, null), nodePortSvc("a", "172.30.0.1", "UDP", 30053, null));
        assertEquals(30053, port(st, "a").nodePort());
        assertEquals(0, port(st, "b").nodePort());
        // A Service with a timestamp is older than one without.
        st = state(nodePortSvc("a", "172.30.0.1", "UDP", 30053, null), nodePortSvc("b", "172.30.0.2", "UDP", 30053, "2025-01-01T00:00:00Z"));
        assertEquals(0, port(st, "a").nodePort());
        assertEquals(30053, port(st, "b").nodePort());
    }

    @Test
    void oneNumberOfDifferentProtocolsIsNoConflict() {
        ProxyState st = state(nodePortSvc("a", "172.30.0.1", "TCP", 30050, null), nodePortSvc("b", "172.30.0.2", "UDP", 30050, null));
        assertEquals(30050, port(st, "a").nodePort());
        assertEquals(30050, port(st, "b").nodePort());
        assertTrue(st.diagnostics().isEmpty(), st.diagnostics().toString());
    }

    @Test
    void aHealthCheckNodePortGoesToTheOlderServiceAndCollidesWithTcpNodePorts() {
        ProxyState st = state(lbLocal("young", "172.30.0.2", 30002, 32000, "2025-01-01T00:00:00Z"),
                lbLocal("old", "172.30.0.1", 30001, 32000, "2024-01-01T00:00:00Z"));
        assertEquals(32000, st.servicePorts().get(OLD).healthCheckNodePort());
        assertEquals(0, st.servicePorts().get(YOUNG).healthCheckNodePort());
        assertEquals(30002, st.servicePorts().get(YOUNG).nodePort(), "its nodePort is its own");
        Diagnostic d = st.diagnostics().get(0);
        assertEquals("spec.healthCheckNodePort", d.field());
        assertTrue(d.reason().contains("a/old"), d.reason());

        // A TCP nodePort of an older Service takes the port a health-check server would listen on.
        st = state(nodePortSvc("old", "172.30.0.1", "TCP", 32000, "2024-01-01T00:00:00Z"),
                lbLocal("young", "172.30.0.2", 30002, 32000, "2025-01-01T00:00:00Z"));
        assertEquals(0, st.servicePorts().get(YOUNG).healthCheckNodePort());
        assertEquals(32000, st.servicePorts().get(OLD).nodePort());
    }

    @Test
    void theDaemonsOwnPortIsNeverANodePort() {
        TestClusters c = TestClusters.cluster().service(nodePortSvc("old", "172.30.0.1", "TCP", 10256, "2024-01-01T00:00:00Z"))
                .service(nodePortSvc("young", "172.30.0.2", "UDP", 10256, null));
        ClusterSnapshot snap = c.snapshot();
        ServiceClaims claims = ServiceClaims.of(snap.services(), Map.of(10256, "healthz server"), List.of(), false);
        ProxyState st = ProxyStateBuilder.build(snap, IpFamily.IPV4, TestClusters.NODE, claims);
        assertEquals(0, st.servicePorts().get(OLD).nodePort());
        assertEquals(10256, st.servicePorts().get(new ServicePortName("a", "young", "", Protocol.UDP)).nodePort(),
                "our servers are TCP; UDP 10256 is free");
        assertTrue(st.diagnostics().get(0).reason().contains("healthz server"), st.diagnostics().toString());
    }

    @Test
    void aServiceThatProgramsNothingHoldsNoPort() {
        ProxyState st = state(nodePortSvc("old", "None", "TCP", 30050, "2024-01-01T00:00:00Z"),
                nodePortSvc("broken", "300.0.0.1", "TCP", 30050, "2024-01-01T00:00:00Z"),
                nodePortSvc("young", "172.30.0.2", "TCP", 30050, "2025-01-01T00:00:00Z"));
        assertEquals(30050, st.servicePorts().get(YOUNG).nodePort());
    }

    @Test
    void putReportsTheServicesWhoseOutcomeChanged() {
        ServiceClaims claims = ServiceClaims.none();
        ServiceObject old = nodePortSvc("old", "172.30.0.1", "TCP", 30050, "2024-01-01T00:00:00Z");
        ServiceObject young = nodePortSvc("young", "172.30.0.2", "TCP", 30050, "2025-01-01T00:00:00Z");
        ServiceObject other = nodePortSvc("other", "172.30.0.3", "TCP", 30099, null);
        assertEquals(Set.of(), claims.put("a/young", List.of(young)));
        assertEquals(Set.of("a/young"), claims.put("a/old", List.of(old)), "young lost its port");
        assertEquals(Set.of(), claims.put("a/other", List.of(other)));
        assertEquals(Set.of(), claims.put("a/young", List.of(young)), "a no-op update affects nobody");
        assertEquals(Set.of("a/young"), claims.put("a/old", List.of()), "the old one is gone: young gets the port");
        assertNull(claims.lostTo("a/young", Protocol.TCP, 30050));
    }

    @Test
    void anExternalIPThatIsAnotherServicesClusterIPIsKeptWithAWarning() {
        ClusterSnapshot snap = TestClusters.cluster()
                .service(svc("a", "victim").clusterIP("172.30.0.1").port("", "TCP", 80).build())
                .service(svc("a", "thief").clusterIP("172.30.0.2").port("", "TCP", 80).externalIP("172.30.0.1").build())
                .service(svc("a", "lb").type("LoadBalancer").clusterIP("172.30.0.3").port("", "TCP", 443, 30443)
                        .lbIngress("192.168.10.20").build()).snapshot();
        Renderer.Rendering r = Renderer.upstream().render(snap, TestClusters.node());
        List<Diagnostic> d = r.diagnostics();
        assertEquals(2, d.size(), d.toString());
        Diagnostic thief = d.stream().filter(x -> x.object().equals("a/thief")).findFirst().orElseThrow();
        assertTrue(thief.kept() && thief.field().equals("spec.externalIPs") && thief.reason().contains("ClusterIP of Service a/victim"),
                thief.toString());
        assertTrue(thief.toString().startsWith("accepted "), thief.toString());
        Diagnostic lb = d.stream().filter(x -> x.object().equals("a/lb")).findFirst().orElseThrow();
        assertTrue(lb.kept() && lb.field().equals("status.loadBalancer.ingress.ip") && lb.reason().contains("this node's address"),
                lb.toString());
        // Accepted as kube-proxy accepts it: the address is still programmed.
        assertEquals(List.of(IpAddress.parse("172.30.0.1")),
                r.state(IpFamily.IPV4).servicePorts().get(new ServicePortName("a", "thief", "", Protocol.TCP)).externalIPs());
    }

    @Test
    void refusingOverlapsSkipsTheAddressWithTheReasonAndKeepsTheRest() {
        ClusterSnapshot snap = TestClusters.cluster()
                .service(svc("a", "victim").clusterIP("172.30.0.1").port("", "TCP", 80).build())
                .service(svc("a", "thief").clusterIP("172.30.0.2").port("", "TCP", 80).externalIP("172.30.0.1")
                        .externalIP("203.0.113.7").build())
                .service(svc("a", "lb").type("LoadBalancer").clusterIP("172.30.0.3").port("", "TCP", 443, 30443)
                        .lbIngress("192.168.10.20").build()).snapshot();
        Renderer.Rendering r = Renderer.upstream().refusingAddressOverlaps().render(snap, TestClusters.node());
        List<Diagnostic> d = r.diagnostics();
        assertEquals(2, d.size(), d.toString());
        Diagnostic thief = d.stream().filter(x -> x.object().equals("a/thief")).findFirst().orElseThrow();
        assertTrue(!thief.kept() && thief.field().equals("spec.externalIPs")
                && thief.reason().endsWith("(CVE-2020-8554); skipped (--refuse-external-ip-overlaps)"), thief.toString());
        assertTrue(thief.toString().startsWith("skipped "), thief.toString());
        Diagnostic lb = d.stream().filter(x -> x.object().equals("a/lb")).findFirst().orElseThrow();
        assertTrue(!lb.kept() && lb.reason().contains("this node's address"), lb.toString());
        // The overlapping address is not programmed; the Service's other externalIP and its ClusterIP are.
        ServicePort thiefPort = r.state(IpFamily.IPV4).servicePorts().get(new ServicePortName("a", "thief", "", Protocol.TCP));
        assertEquals(List.of(IpAddress.parse("203.0.113.7")), thiefPort.externalIPs());
        assertEquals(IpAddress.parse("172.30.0.2"), thiefPort.clusterIP());
        assertEquals(List.of(), r.state(IpFamily.IPV4).servicePorts().get(new ServicePortName("a", "lb", "", Protocol.TCP))
                .loadBalancerIPs());
    }

    @Test
    void aClusterIPChangeReportsTheServicesExposingTheOldOrNewAddress() {
        ServiceClaims claims = ServiceClaims.none();
        assertEquals(Set.of(), claims.put("a/thief", List.of(svc("a", "thief").clusterIP("172.30.0.2").externalIP("172.30.0.1").build())));
        assertEquals(Set.of("a/thief"), claims.put("a/victim", List.of(svc("a", "victim").clusterIP("172.30.0.1").build())));
        assertTrue(claims.overlap("a/thief", IpAddress.parse("172.30.0.1")).contains("a/victim"));
        assertNull(claims.overlap("a/victim", IpAddress.parse("172.30.0.1")), "its own ClusterIP is no overlap");
        assertEquals(Set.of("a/thief"), claims.put("a/victim", List.of(svc("a", "victim").clusterIP("172.30.0.9").build())));
        assertNull(claims.overlap("a/thief", IpAddress.parse("172.30.0.1")));
    }

    private static ServicePort port(ProxyState st, String name) {
        List<ServicePort> out = new ArrayList<>();
        for (ServicePort sp : st.servicePorts().values()) if (sp.name().name().equals(name)) out.add(sp);
        assertEquals(1, out.size(), name);
        return out.get(0);
    }
}
