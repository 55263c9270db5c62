package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.nftproxy.netlink.KernelTests;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

/**
 * How long the side-by-side benchmark's cluster takes to set up: N Services × 2 endpoints through the API
 * ({@link ApiServices#create}, {@code -Dbench.through=api}) or stored ({@link StoredServices#create}, the default),
 * with the API server's and etcd's CPU meanwhile. {@code -Dbench.profile=/tmp/x} also saves a 30 s CPU profile of
 * the API server taken 30 s in ({@code go tool pprof -top kube-apiserver /tmp/x-N.pprof}). Prints, asserts only that
 * every object was listed back; runs only with {@code -Dbench.populate=1000,5000}.
 */
class PopulateBench {
    @Test
    void populate() throws Exception {
        String sizes = System.getProperty("bench.populate");
        Assumptions.assumeTrue(sizes != null, "a benchmark: run with -Dbench.populate=1000,5000");
        KernelTests.skipIfMissing(ApiServerBinaries.unavailabilityCause());
        boolean throughApi = "api".equals(System.getProperty("bench.through"));
        String profile = System.getProperty("bench.profile");
        for (String size : sizes.split(",")) {
            int n = Integer.parseInt(size.strip());
            ApiServerProcess.Options options = ApiServerProcess.Options.defaults();
            if (profile != null) options = options.withApiServerArgs("--profiling=true");
            try (ApiServerProcess api = ApiServerProcess.start(ApiServerBinaries.locateOrBuild(), options);
                 KubernetesClient admin = RealApiServerTest.client(api.adminKubeconfig())) {
                admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("p").endMetadata().build()).create();
                Process profiler = profile == null ? null : new ProcessBuilder("bash", "-c", "sleep 30; curl -sk -H 'Authorization: Bearer "
                        + api.adminToken() + "' '" + api.url() + "/debug/pprof/profile?seconds=30' -o " + profile + "-" + n + ".pprof")
                        .inheritIO().start();
                Duration[] c0 = cpu();
                List<String> endpoints = List.of("10.200.0.1", "10.200.0.2");
                long ms = throughApi ? ApiServices.create(admin, "p", n, k -> endpoints) : StoredServices.create(api, admin, "p", n, k -> endpoints);
                Duration[] c1 = cpu();
                System.out.printf("POPULATE %s %d services + %d slices in %d ms = %.0f objects/s; CPU: kube-apiserver %.1f s, etcd %.1f s, this JVM %.1f s%n",
                        throughApi ? "through the API" : "stored", n, n, ms, 2000.0 * n / ms, seconds(c1[0].minus(c0[0])),
                        seconds(c1[1].minus(c0[1])), seconds(c1[2].minus(c0[2])));
                if (profiler != null) profiler.waitFor();
            }
        }
    }

    private static double seconds(Duration d) { return d.toMillis() / 1000.0; }

    /** CPU so far of this JVM's kube-apiserver and etcd children, and of this JVM. */
    private static Duration[] cpu() {
        Duration api = Duration.ZERO;
        Duration etcd = Duration.ZERO;
        for (ProcessHandle h : ProcessHandle.current().children().toList()) {
            String cmd = h.info().command().orElse("");
            Duration d = h.info().totalCpuDuration().orElse(Duration.ZERO);
            if (cmd.endsWith("/kube-apiserver")) api = api.plus(d);
            else if (cmd.endsWith("/etcd")) etcd = etcd.plus(d);
        }
        return new Duration[] {api, etcd, ProcessHandle.current().info().totalCpuDuration().orElse(Duration.ZERO)};
    }
}
