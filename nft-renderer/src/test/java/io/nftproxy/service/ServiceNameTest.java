package io.nftproxy.service;

import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.Protocol;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.nft.Transaction;
import io.nftproxy.render.Renderer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which Service names get rules: every DNS-1123 label, as the API server with RelaxedServiceNameValidation accepts
 * (found by upstream's e2e "DNS should work with a service name that starts with a digit", where nftproxy skipped
 * "1kubernetes" and kube-proxy did not), and nothing else.
 */
class ServiceNameTest {

    private static ClusterSnapshot named(String name) {
        return TestClusters.cluster()
                .with(svc("dns", name).clusterIP("172.30.0.7").port("http", "TCP", 80))
                .with(slice("dns", name, name + "-abcde").port("http", "TCP", 8080).ready("10.0.0.7", TestClusters.NODE))
                .snapshot();
    }

    @Test
    void aServiceNameStartingWithADigitIsProxied() {
        ProxyState st = ProxyStateBuilder.build(named("1kubernetes"), IpFamily.IPV4, TestClusters.NODE);
        ServicePortName spn = new ServicePortName("dns", "1kubernetes", "http", Protocol.TCP);
        assertEquals(List.of(), st.diagnostics());
        assertTrue(st.servicePorts().containsKey(spn), st.servicePorts()::toString);
        assertEquals(1, st.endpoints().get(spn).size(), "its EndpointSlice, matched by the service-name label");

        String script = Transaction.creating(Renderer.upstream().render(named("1kubernetes"), TestClusters.node())
                .table(IpFamily.IPV4)).script(Capabilities.baseline());
        assertTrue(script.contains("dns/1kubernetes/tcp/http"), "a service chain for it");
        assertTrue(script.contains("172.30.0.7 . tcp . 80"), "its ClusterIP in the services map");
    }

    @Test
    void namesThatAreNotDns1123LabelsAreStillSkippedWithTheReason() {
        for (String bad : List.of("Kubernetes", "-kubernetes", "kubernetes-", "kube_dns", "a".repeat(64))) {
            ProxyState st = ProxyStateBuilder.build(named(bad), IpFamily.IPV4, TestClusters.NODE);
            assertTrue(st.servicePorts().isEmpty(), bad);
            assertTrue(st.diagnostics().stream().anyMatch(d -> d.kind().equals("Service") && d.field().equals("metadata.name")
                    && d.reason().contains("DNS-1123 label")), () -> bad + ": " + st.diagnostics());
        }
    }
}
