package io.nftproxy.render;

import io.nftproxy.TestClusters;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.service.Diagnostic;
import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HostileInputTest {
    /** Every line the writer may emit: a verb, an object kind, our table, then only name-safe text and quoted comments. */
    private static final Pattern LINE = Pattern.compile(
            "add (table|chain|rule|set|map|element) ip6? kube-proxy( [A-Za-z0-9_./:@{},;\\[\\]-]+| \"[ -~&&[^\"\\\\;#]]*\"| !=| : )*");

    static String script() {
        Renderer.Rendering r = Renderer.upstream().render(HostileInputs.snapshot(), TestClusters.node());
        StringBuilder sb = new StringBuilder();
        for (IpFamily f : IpFamily.values()) sb.append(Transaction.creating(r.table(f)).script(Capabilities.baseline()));
        return sb.toString();
    }

    @Test
    void noHostileStringReachesTheScript() {
        String s = script();
        for (String bad : HostileInputs.FORBIDDEN) {
            assertFalse(s.contains(bad), "script contains " + bad);
        }
        assertEquals(s.getBytes(StandardCharsets.UTF_8).length, s.length(), "script is pure ASCII");
    }

    @Test
    void everyLineHasTheWritersGrammar() {
        for (String line : script().split("\n")) {
            assertTrue(LINE.matcher(line).matches(), "unexpected line shape: " + line);
        }
    }

    @Test
    void goodServicesAndGoodPartsSurvive() {
        String s = script();
        assertTrue(s.contains("goto service-"), s);
        assertTrue(s.contains("172.30.8.1 . tcp . 80 : goto service-"), "good/web rendered");
        assertTrue(s.contains("172.30.8.10 . udp . 53 comment \"good/dns:dns\" : goto reject-chain"), "good/dns rendered");
        // A bad port does not take the service's good port with it.
        assertTrue(s.contains("172.30.9.3 . tcp . 81"), "evil/newline:ok kept");
        assertTrue(s.contains("172.30.9.7 . udp . 83"), "evil/ports:good kept");
        // A bad externalIP is dropped, the good one kept.
        assertTrue(s.contains("192.0.2.66 . tcp . 80"), "valid externalIP kept");
        // A sloppy IPv4 spelling is re-serialised, never forwarded.
        assertTrue(s.contains("dnat to 10.180.9.3:8080"), "010.180.009.003 canonicalised");
        // An out-of-range affinity timeout falls back to the API default.
        assertTrue(s.contains("timeout 10800s"), "affinity default used");
        assertTrue(s.contains("ip daddr 172.30.0.0/16 drop"), "valid ServiceCIDR kept");
    }

    @Test
    void everySkippedObjectIsReportedWithItsField() {
        List<Diagnostic> d = Renderer.upstream().render(HostileInputs.snapshot(), TestClusters.node()).diagnostics();
        assertSkipped(d, "evil/svc;delete table ip kube-proxy", "metadata.name");
        assertSkipped(d, "evil/newline", "spec.ports.name");
        assertSkipped(d, "evil/hostname-ip", "spec.clusterIP");
        assertSkipped(d, "evil/injected-ip", "spec.clusterIP");
        assertSkipped(d, "evil/bad-externals", "spec.externalIPs");
        assertSkipped(d, "evil/bad-externals", "status.loadBalancer.ingress.ip");
        assertSkipped(d, "evil/bad-externals", "spec.loadBalancerSourceRanges");
        assertSkipped(d, "evil/ports", "protocol");
        assertSkipped(d, "evil/ports", "spec.ports.port");
        assertSkipped(d, "evil/ports", "spec.ports.nodePort");
        assertSkipped(d, "evil/affinity", "spec.sessionAffinityConfig.clientIP.timeoutSeconds");
        assertSkipped(d, "evil/policy", "spec.externalTrafficPolicy");
        assertSkipped(d, "evil/s1", "endpoints.addresses");
        assertSkipped(d, "evil/s3", "ports.name");
        assertSkipped(d, "evil/s2", "metadata.name");
        assertSkipped(d, "evil/s3", "endpoints.nodeName");
        assertSkipped(d, "evil/s3", "endpoints.addresses");
        assertSkipped(d, "evil/no-label", "metadata.labels");
        assertSkipped(d, "evil/nil-port-name", "ports.name");
        assertSkipped(d, "kubernetes", "spec.cidrs");
        for (Diagnostic x : d) {
            String line = x.toString();
            assertFalse(line.contains("\n"), "diagnostic is one line: " + line);
        }
    }

    private static void assertSkipped(List<Diagnostic> d, String object, String field) {
        assertTrue(d.stream().anyMatch(x -> x.object().equals(object) && x.field().equals(field)),
                "expected a diagnostic for " + object + " field " + field + " in " + d);
    }
}
