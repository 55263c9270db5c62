package io.nftproxy.it.diff;

import io.nftproxy.random.ClusterGenerator;
import io.nftproxy.random.RandomCluster;
import io.nftproxy.random.SeedRunner;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * nftproxy against upstream kube-proxy v1.36.3 on random clusters ({@link ClusterGenerator}: every feature, a random
 * node and proxy configuration per seed), through the {@link DifferentialHarness} with one API server for the whole
 * run: regression seeds, then new seeds until the time budget ({@value SeedRunner#BUDGET_PROPERTY}, seconds;
 * {@link #BUDGET} by default) runs out, then one 1,000-Service random cluster. A cluster with a difference is shrunk
 * ({@code ClusterShrinker}, every try a full harness run, at most {@link #SHRINK_TRIES} tries in {@link #SHRINK_TIME}) and the test fails
 * with its seed and the minimal cluster's manifests ({@value SeedRunner#SEED_PROPERTY} replays it). An endpoint
 * listed in two slices of a Service is listed the same way in both
 * ({@link RandomCluster#withConsistentDuplicateEndpoints()}): kube-proxy's choice between differing copies is random. Skips, saying
 * why, without kube-proxy, the API server or network namespaces; fails instead when
 * {@value KubeProxyBinary#REQUIRED_ENV} is set (CI).
 */
class KubeProxyRandomDifferentialTest {
    /**
     * New seeds' budget: a small cluster costs about one start and sync of the three proxies (7.5-12.6 s measured
     * on the shared 2-core machine), so this is about 12 clusters; with the regression seed, the 1,000-Service
     * cluster (about 50 s) and the API server's start the class took 177 s, within the 5 minutes CI allows it.
     */
    static final Duration BUDGET = Duration.ofSeconds(120);
    /**
     * Shrinking after a difference: each try is a full harness run (8-45 s, up to the sync limit when a proxy does
     * not sync), so at most this many tries and {@link #SHRINK_TIME}: a failing run takes at most ~10 minutes more.
     */
    static final int SHRINK_TRIES = 40;
    static final Duration SHRINK_TIME = Duration.ofMinutes(10);
    static final int AT_SCALE = 1_000;
    /** Seeds run first, every time: a seed that once found a difference goes here with the fix. */
    static final List<Long> REGRESSION_SEEDS = List.of(1L);
    private static final int LISTED = 10;
    private static DifferentialHarness harness;

    @BeforeAll
    static void start() throws Exception {
        harness = DifferentialHarness.startOrSkip(KubeProxyRandomDifferentialTest.class);
    }

    @AfterAll
    static void stop() throws Exception {
        if (harness != null) harness.close();
    }

    @Test
    void randomClustersAgreeWithKubeProxy() {
        SeedRunner.Result r = SeedRunner.run("kube-proxy-random", REGRESSION_SEEDS, BUDGET, SHRINK_TRIES, SHRINK_TIME,
                seed -> ClusterGenerator.generate(seed).withConsistentDuplicateEndpoints(), KubeProxyRandomDifferentialTest::differences);
        assertTrue(r.clusters() >= SeedRunner.minimumClusters(REGRESSION_SEEDS), r.toString());
    }

    @Test
    void aThousandServiceRandomClusterAgreesWithKubeProxy() {
        // A zero budget: exactly one new seed, after none of the regression seeds (the test above runs those).
        SeedRunner.Result r = SeedRunner.run("kube-proxy-random-at-scale", List.of(), Duration.ZERO, SHRINK_TRIES, SHRINK_TIME,
                seed -> ClusterGenerator.generate(seed, AT_SCALE).withConsistentDuplicateEndpoints(), KubeProxyRandomDifferentialTest::differences);
        assertTrue(r.services() >= AT_SCALE, r.toString());
    }

    /**
     * The harness's differences for {@code c}, and a problem when the comparison saw too little of it (kube-proxy's
     * table not holding the cluster would make "no differences" meaningless).
     */
    static List<String> differences(RandomCluster c) {
        DifferentialHarness.Differences d;
        try {
            d = harness.compare(c.snapshot(), c.node());
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("the harness failed on " + c.summary() + ": " + e, e);
        }
        System.out.print("differential, seed " + c.seed() + ": " + d.report(LISTED));
        List<String> out = new ArrayList<>(d.upstreamLayout());
        out.addAll(d.defaultLayout());
        if (d.objects() == 0 || d.flowsTraced() == 0) out.add("the comparison saw nothing of the cluster: " + d.report(0));
        return out;
    }
}
