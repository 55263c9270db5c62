package io.nftproxy.it;

import io.nftproxy.cli.ExitCodes;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.demo.DemoCluster;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.demo.Topology;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.Optional;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code nftproxy demo} as a newcomer runs it, in this JVM: real namespaces, the real daemon, real requests. The
 * assertions are about what its output reports the backends saw, and about what it leaves behind (nothing).
 */
class DemoCommandKernelTest {
    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailableAnd(Optional.ofNullable(Topology.unavailabilityCause()));
    }

    @Test
    void reachesEveryHelloBackendThenTheTwoLeftAfterScalingAndCleansUp() throws Exception {
        long t0 = System.nanoTime();
        CliRun r = CliRun.of("demo");
        long millis = (System.nanoTime() - t0) / 1_000_000;
        System.out.println(r.out());
        System.out.printf("demo: exit %d in %d ms%n", r.exit(), millis);
        assertEquals(ExitCodes.OK, r.exit(), r::err);
        assertTrue(millis < 30_000, "the demo took " + millis + " ms");

        String rules = section(r.out(), 4), clusterIp = section(r.out(), 5), nodePort = section(r.out(), 6), scaled = section(r.out(), 7);
        // issue 24: in the flat layout hello has no chain; grep of its name finds its elements in the kernel's listing.
        assertTrue(rules.contains("map service-ips: 10.105.101.118 . tcp . 80 comment \"demo/hello:http\" : continue"), rules);
        assertTrue(rules.contains("map flat-endpoints-tcp-3: 10.105.101.118 . 80 . 2 comment \"demo/hello:http\" : 172.20.211.48 . 8080"), rules);
        assertTrue(scaled.contains("map flat-endpoints-tcp-2: 10.105.101.118 . 80 . 1 comment \"demo/hello:http\" : 172.20.211.48 . 8080"), scaled);
        for (DemoCluster.Backend b : DemoCluster.BACKENDS) {
            assertTrue(answered(clusterIp, b.role()), () -> b.role() + " never answered the ClusterIP:\n" + clusterIp);
            assertTrue(answered(nodePort, b.role()), () -> b.role() + " never answered the NodePort:\n" + nodePort);
        }
        assertTrue(clusterIp.contains("backends reached: 3 of 3, 30 of 30 requests answered"), clusterIp);
        assertTrue(clusterIp.contains("saw " + DemoCluster.POD_CLIENT + " (the client's own address"), clusterIp);
        assertTrue(nodePort.contains("backends reached: 3 of 3, 30 of 30 requests answered"), nodePort);
        assertTrue(nodePort.contains("saw " + DemoCluster.NODE_IP + " (k8s-node-1's address: masqueraded)"), nodePort);
        assertFalse(nodePort.contains("saw " + DemoCluster.EXTERNAL_CLIENT), nodePort);

        assertTrue(scaled.contains("the daemon applied it"), scaled);
        assertTrue(scaled.contains("backends reached: 2 of 2, 30 of 30 requests answered"), scaled);
        assertFalse(answered(scaled, DemoCluster.SCALED_AWAY.role()), scaled);

        assertEquals(List.of(), leftovers(), "namespaces left behind");
    }

    /**
     * Few requests may miss a backend by chance, which is no failure: with 1 request two of the three backends are
     * always missed, and the demo used to exit 7 for it (with 5, about 4 runs in 10).
     */
    @Test
    void fewRequestsAreNoFailureWhenTheSpreadMissesABackend() throws Exception {
        CliRun r = CliRun.of("demo", "--requests", "1");
        assertEquals(ExitCodes.OK, r.exit(), () -> r.out() + r.err());
        assertTrue(section(r.out(), 5).contains("backends reached: 1 of 3, 1 of 1 requests answered"), r.out());
        assertTrue(section(r.out(), 5).contains("from 26 on, each must answer"), r.out());
        assertTrue(r.out().contains("Demo finished in"), r.out());
        assertEquals(List.of(), leftovers(), "namespaces left behind");
    }

    @Test
    void tooManyRequestsIsAUsageError() throws Exception {
        CliRun r = CliRun.of("demo", "--requests", "501");
        assertEquals(ExitCodes.USAGE, r.exit(), r::err);
        assertTrue(r.err().contains("--requests"), r.err());
        assertEquals(List.of(), leftovers());
    }

    /** The text of step {@code n}, up to the next step. */
    private static String section(String out, int n) {
        int from = out.indexOf("[" + n + "/8]"), to = out.indexOf("[" + (n + 1) + "/8]");
        assertTrue(from >= 0 && to > from, () -> "no step " + n + " in:\n" + out);
        return out.substring(from, to);
    }

    /** Whether the spread in {@code section} has a line for {@code backend} with a non-zero count. */
    private static boolean answered(String section, String backend) {
        return section.lines().anyMatch(l -> l.strip().startsWith(backend + " ") && l.matches(".*#+\\s+[1-9][0-9]*\\s+saw .*"));
    }

    private static List<String> leftovers() throws IOException { return KernelNamespace.existing(DemoCluster.TAG); }
}
