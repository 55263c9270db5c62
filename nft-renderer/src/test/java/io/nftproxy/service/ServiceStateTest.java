package io.nftproxy.service;

import io.nftproxy.net.IpFamily;

import io.nftproxy.RandomClusters;
import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.render.GoldenScenarios;
import io.nftproxy.render.HostileInputs;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every Service built on its own, put together, is exactly the state of the whole snapshot. */
class ServiceStateTest {

    /** The whole-snapshot state rebuilt from per-Service states and the ServiceCIDRs alone. */
    static ProxyState assembled(ClusterSnapshot s, IpFamily f, String node) {
        Map<String, List<ServiceObject>> services = new TreeMap<>();
        Map<String, List<EndpointSliceObject>> slices = new HashMap<>();
        for (ServiceObject svc : s.services()) services.computeIfAbsent(ProxyStateBuilder.serviceKey(svc), k -> new ArrayList<>()).add(svc);
        for (EndpointSliceObject sl : s.endpointSlices()) {
            String k = ProxyStateBuilder.serviceKey(sl);
            slices.computeIfAbsent(k, x -> new ArrayList<>()).add(sl);
            services.putIfAbsent(k, List.of());
        }
        ServiceClaims claims = ServiceClaims.of(s.services(), Map.of(), List.of(), false);
        TreeMap<ServicePortName, ServicePort> ports = new TreeMap<>();
        Map<ServicePortName, List<Endpoint>> endpoints = new HashMap<>();
        List<Diagnostic> diags = new ArrayList<>();
        for (Map.Entry<String, List<ServiceObject>> e : services.entrySet()) {
            ProxyState st = ProxyStateBuilder.buildService(e.getValue(), slices.getOrDefault(e.getKey(), List.of()), f, node, claims);
            for (ServicePortName n : st.servicePorts().keySet()) assertTrue(ports.put(n, st.servicePorts().get(n)) == null, n::toString);
            for (Map.Entry<ServicePortName, List<Endpoint>> ep : st.endpoints().entrySet()) {
                assertTrue(endpoints.put(ep.getKey(), ep.getValue()) == null, () -> "endpoints of " + ep.getKey() + " in two groups");
            }
            diags.addAll(st.diagnostics());
        }
        ProxyState cidrs = ProxyStateBuilder.build(new ClusterSnapshot(List.of(), List.of(), List.of(), s.serviceCidrs()), f, node);
        diags.addAll(cidrs.diagnostics());
        return new ProxyState(f, ports, endpoints, cidrs.serviceCidrs(), diags);
    }

    private static void assertSame(String what, ClusterSnapshot s, String node) {
        for (IpFamily f : IpFamily.values()) {
            ProxyState whole = ProxyStateBuilder.build(s, f, node);
            ProxyState parts = assembled(s, f, node);
            assertEquals(whole.servicePorts(), parts.servicePorts(), what + " " + f);
            assertEquals(whole.endpoints(), parts.endpoints(), what + " " + f);
            assertEquals(whole.serviceCidrs(), parts.serviceCidrs(), what + " " + f);
            // The order differs (grouped by Service instead of all Services, then all slices); the content may not.
            assertEquals(sortedText(whole.diagnostics()), sortedText(parts.diagnostics()), what + " " + f);
            assertEquals(whole.diagnostics().size(), parts.diagnostics().size(), what + " " + f);
        }
    }

    private static TreeSet<String> sortedText(List<Diagnostic> d) {
        TreeSet<String> s = new TreeSet<>();
        d.forEach(x -> s.add(x.toString()));
        return s;
    }

    @Test
    void goldenScenariosAndHostileInputsBuildTheSamePerService() {
        for (GoldenScenarios.Scenario sc : GoldenScenarios.all()) assertSame(sc.name(), sc.snapshot(), sc.node().nodeName());
        assertSame("hostile", HostileInputs.snapshot(), TestClusters.NODE);
    }

    @Test
    void randomWalksBuildTheSamePerService() {
        for (long seed = 1; seed <= 5; seed++) {
            RandomClusters walk = new RandomClusters(seed);
            for (int i = 0; i < 120; i++) {
                String step = walk.step();
                assertSame("seed " + seed + " step " + i + " (" + step + ")", walk.snapshot(), TestClusters.NODE);
            }
        }
    }
}
