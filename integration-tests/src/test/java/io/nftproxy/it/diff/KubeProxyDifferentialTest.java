package io.nftproxy.it.diff;

import io.nftproxy.random.NodeSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * nftproxy against upstream kube-proxy v1.36.3 on the {@link FeatureCorpus}, through the {@link DifferentialHarness}:
 * with {@code --table-layout upstream} the tables are identical, with the default layout every probe flow ends the
 * same way with the same odds. One run per proxy configuration that changes the table (each detect-local mode,
 * masqueradeAll, nodePortAddresses), the first with 1,000 more Services. Skips, saying why, without kube-proxy, the
 * API server or network namespaces; fails instead when {@value KubeProxyBinary#REQUIRED_ENV} is set (CI).
 */
class KubeProxyDifferentialTest {
    private static final int AT_SCALE = 1_000;
    /** Differences printed per comparison; the count says how many more. */
    private static final int LISTED = 25;
    private static DifferentialHarness harness;

    @BeforeAll
    static void start() throws Exception {
        harness = DifferentialHarness.startOrSkip(KubeProxyDifferentialTest.class);
    }

    @AfterAll
    static void stop() throws Exception {
        if (harness != null) harness.close();
    }

    @Test
    void clusterCidrDetectionAtScale() throws Exception {
        check(FeatureCorpus.atScale(AT_SCALE), NodeSettings.dualStackNode());
    }

    @Test
    void nodeCidrDetectionWithMasqueradeAll() throws Exception {
        check(FeatureCorpus.features(), NodeSettings.dualStackNode().withDetectLocal(NodeSettings.NODE_CIDR, "").withMasqueradeAll(true));
    }

    @Test
    void bridgeInterfaceDetectionWithIpv4NodePortAddresses() throws Exception {
        check(FeatureCorpus.features(), NodeSettings.dualStackNode().withDetectLocal(NodeSettings.BRIDGE_INTERFACE, "cbr0")
                .withNodePortAddresses(List.of("192.168.10.0/24"), List.of()));
    }

    @Test
    void interfaceNamePrefixDetectionWithNodeAddressesOnly() throws Exception {
        check(FeatureCorpus.features(), NodeSettings.dualStackNode().withDetectLocal(NodeSettings.INTERFACE_NAME_PREFIX, "veth")
                .withNodePortAddresses(List.of("192.168.10.20/32", "fd00:192:168:10::20/128"), List.of()));
    }

    private static void check(io.nftproxy.cluster.ClusterSnapshot cluster, NodeSettings node) throws Exception {
        DifferentialHarness.Differences d = harness.compare(cluster, node);
        String report = d.report(LISTED);
        System.out.print("differential: " + report);
        // The comparisons saw the cluster: kube-proxy's tables hold it and the flows reach its endpoints.
        assertTrue(d.objects() > cluster.services().size(), "kube-proxy's tables hold too little: " + report);
        assertTrue(d.flowsDnat() > cluster.services().size(), "too few flows reached an endpoint: " + report);
        assertTrue(d.control() > 0, "the object comparison found the default layout identical to kube-proxy's: " + report);
        assertTrue(d.same(), report);
    }
}
