package io.nftproxy.trace;

import io.nftproxy.net.IpFamily;
import io.nftproxy.net.Protocol;
import io.nftproxy.nft.TableContent;
import io.nftproxy.render.GoldenScenarios;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * issue 24: a trace says which Service the packet matched, in every layout: from the flat and no-endpoint elements'
 * comments, or from the name of the port chain a dispatch element goes to.
 */
class TraceNamesServiceTest {
    private static final GoldenScenarios.Scenario LB = scenario("loadbalancer");
    private static final GoldenScenarios.Scenario NO_ENDPOINTS = scenario("clusterip-no-endpoints");

    @ParameterizedTest
    @EnumSource(TableLayout.class)
    void aClusterIpNamesItsServicePort(TableLayout layout) {
        Trace t = trace(LB, layout, Packet.of(Origin.POD, "10.211.48.7", "172.30.232.108", Protocol.TCP, 80));
        assertEquals(List.of("demo/hello-lb port http (tcp 80), element of @service-ips"), t.services());
        assertTrue(t.render().contains("\nservice: matched demo/hello-lb port http (tcp 80), element of @service-ips\nverdict: DNAT"),
                t.render());
    }

    @ParameterizedTest
    @EnumSource(TableLayout.class)
    void aNodePortNamesItsServicePort(TableLayout layout) {
        Trace t = trace(LB, layout, Packet.of(Origin.EXTERNAL, "198.51.100.7", "192.168.10.20", Protocol.TCP, 31950));
        assertEquals(List.of("demo/hello-lb port http (NodePort tcp 31950), element of @service-nodeports"), t.services());
    }

    /** Rejected before any DNAT, by the no-endpoint map whose element names the port. */
    @ParameterizedTest
    @EnumSource(TableLayout.class)
    void aPortWithoutEndpointsIsNamedWhereItIsRejected(TableLayout layout) {
        Trace t = trace(NO_ENDPOINTS, layout, Packet.of(Origin.POD, "10.211.48.7", "172.30.229.142", Protocol.TCP, 80));
        assertEquals(List.of("demo/legacy-api port http (tcp 80), element of @no-endpoint-services"), t.services(), t.render());
        assertTrue(t.render().contains("verdict: REJECT"), t.render());
    }

    @ParameterizedTest
    @EnumSource(TableLayout.class)
    void anAddressNoServiceHasSaysSo(TableLayout layout) {
        Trace t = trace(LB, layout, Packet.of(Origin.POD, "10.211.48.7", "192.0.2.99", Protocol.TCP, 80));
        assertEquals(List.of(), t.services());
        assertTrue(t.render().contains("service: matched none (192.0.2.99:80 tcp is no Service address or NodePort in this table)"),
                t.render());
    }

    private static Trace trace(GoldenScenarios.Scenario s, TableLayout layout, Packet p) {
        TableContent table = new Renderer(layout).render(s.snapshot(), s.node()).table(IpFamily.IPV4);
        return PacketTracer.trace(table, s.node(), p);
    }

    private static GoldenScenarios.Scenario scenario(String name) {
        return GoldenScenarios.all().stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
    }
}
