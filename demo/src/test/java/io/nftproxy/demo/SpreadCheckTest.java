package io.nftproxy.demo;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The demo asks every backend to answer only when a fair random spread of that many requests reaches them all but
 * for a chance below one in 10,000: with fewer requests a missed backend is luck, not a broken rule.
 */
class SpreadCheckTest {
    @Test
    void everyBackendIsExpectedOnlyWhereMissingOneIsNoLongerLuck() {
        // 3 backends: 3 x (2/3)^n < 1e-4 from n = 26 on (3 x (2/3)^25 = 1.2e-4).
        assertEquals(26, Demo.requestsForSpread(3));
        assertFalse(Demo.everyBackendExpected(3, 5), "5 requests miss one of 3 backends about 38 times in 100");
        assertTrue(Demo.everyBackendExpected(3, 30), "the default");
        // 2 backends (after the scale-down): 2 x (1/2)^n < 1e-4 from n = 15 on.
        assertEquals(15, Demo.requestsForSpread(2));
        assertTrue(Demo.everyBackendExpected(1, 1), "one backend answers every request that is answered at all");
        for (int n = 1; n <= Demo.MAX_REQUESTS; n++) {
            for (int k = 2; k <= 3; k++) {
                double miss = k * Math.pow((k - 1) / (double) k, n);
                assertEquals(miss < 1e-4, Demo.everyBackendExpected(k, n), k + " backends, " + n + " requests");
            }
        }
    }

    private static Probe.Outcome reply(String backend) {
        return new Probe.Outcome(Probe.Kind.REPLY, backend, DemoCluster.POD_CLIENT, 300, null);
    }

    /** What the last line of a failed demo says: the step's problem itself, not "see above". */
    @Test
    void theProblemNamesWhatWentWrong() {
        java.io.StringWriter printed = new java.io.StringWriter();
        Demo five = new Demo(new java.io.PrintWriter(printed, true), new Demo.Options(5, false));
        java.util.List<Probe.Outcome> twoBackends = java.util.List.of(reply("hello-7k5d9"), reply("hello-7k5d9"),
                reply("hello-d7bpf"), reply("hello-d7bpf"), reply("hello-d7bpf"));
        assertEquals(null, five.spread(twoBackends, DemoCluster.BACKENDS, DemoCluster.POD_CLIENT), "5 requests may miss a backend");
        assertTrue(printed.toString().contains("from 26 on, each must answer"), printed.toString());

        Demo thirty = new Demo(new java.io.PrintWriter(new java.io.StringWriter(), true), new Demo.Options(30, false));
        java.util.List<Probe.Outcome> outcomes = new java.util.ArrayList<>();
        for (int i = 0; i < 28; i++) outcomes.add(reply(i % 2 == 0 ? "hello-7k5d9" : "hello-dj4mf"));
        outcomes.add(new Probe.Outcome(Probe.Kind.REFUSED, null, null, 1_000_000, "connection refused"));
        outcomes.add(reply("hello-zzzzz"));
        assertEquals("1 of 30 requests got no answer, hello-zzzzz answered but is not an endpoint, hello-d7bpf answered none of 30 requests",
                thirty.spread(outcomes, DemoCluster.BACKENDS, DemoCluster.POD_CLIENT));
    }
}
