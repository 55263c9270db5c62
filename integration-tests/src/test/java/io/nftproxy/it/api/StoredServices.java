package io.nftproxy.it.api;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.IPAddress;
import io.fabric8.kubernetes.api.model.networking.v1.IPAddressBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Listable;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/**
 * The same Services and EndpointSlices as {@link ApiServices#create}, for sizes where creating them through the API
 * server takes too long: written straight into the API server's etcd, then read back through the API server.
 *
 * <p>Why not through the API: in 1.36 every ClusterIP a Service gets is an IPAddress object, and each allocation
 * (static or dynamic) refreshes two gauges by listing every IPAddress in the allocator's informer and matching
 * their labels ({@code ipallocator.Allocator.Used}, called twice from {@code createIPAddress}): a cost per Service
 * create that grows with the number of Services. Profiled on this machine: 57 % of the API server's CPU at 2,500–5,000
 * Services; 5.2 s of API server CPU for 1,000 Services and their slices, 75 s for 5,000, so about 80 min for 45,000.
 *
 * <p>What is stored is what the API server itself stores: {@code s0}, its slice and the IPAddress the allocator made
 * for it are created through the API, read back, and copied for every other Service with a fresh name, uid and
 * ClusterIP (each with its IPAddress, so the allocator's repair loop finds nothing to fix). The API server decodes
 * JSON from storage next to its own protobuf. Each etcd transaction puts a batch only if none of its keys exists;
 * a refused batch, or a count read back through the API server that is not the one written, fails the call.
 */
final class StoredServices {
    /** etcd refuses a transaction of more than 128 operations unless started with a larger --max-txn-ops. */
    private static final int SERVICES_PER_TXN = 42;
    private static final int PARALLEL_TXNS = 4;
    /** Dynamic allocations cannot land on these: every stored Service has its IPAddress, which the allocator checks. */
    private static final long FIRST_IP = ipv4("10.100.0.1");

    private StoredServices() {}

    /** ClusterIP of {@code s<k>}: 10.100.0.1 onwards, inside {@link ApiServerProcess#SERVICE_CLUSTER_IP_RANGE}. */
    static String clusterIP(int k) {
        long ip = FIRST_IP + k;
        if (ip > ipv4("10.111.255.254")) throw new IllegalArgumentException("no ClusterIP for service " + k + " in 10.96.0.0/12");
        return (ip >> 24) + "." + (ip >> 16 & 255) + "." + (ip >> 8 & 255) + "." + (ip & 255);
    }

    /**
     * Stores {@code s0} … {@code s<count-1>} in {@code ns} (http 80 → 8080), each with one slice {@code sN-1} holding
     * {@code endpoints.apply(N)}, and returns the milliseconds until the API server listed all of them.
     */
    static long create(ApiServerProcess api, KubernetesClient admin, String ns, int count, IntFunction<List<String>> endpoints)
            throws Exception {
        long t0 = System.nanoTime();
        Service svc = new ServiceBuilder(ApiServices.clusterIP(ns, "s0", 80, 8080)).editSpec().withClusterIP(clusterIP(0)).endSpec().build();
        admin.services().inNamespace(ns).resource(svc).create();
        admin.discovery().v1().endpointSlices().inNamespace(ns)
                .resource(DaemonAgainstApiServerTest.slice(ns, "s0", "s0-1", 8080, endpoints.apply(0))).create();
        Templates t = new Templates(
                admin.services().inNamespace(ns).withName("s0").get(),
                admin.discovery().v1().endpointSlices().inNamespace(ns).withName("s0-1").get(),
                admin.network().v1().ipAddresses().withName(clusterIP(0)).get());
        for (String key : List.of(t.serviceKey("s0"), t.sliceKey("s0-1"), t.ipKey(clusterIP(0)))) {
            if (!exists(api, key)) throw new IllegalStateException("the API server does not store " + key + "; its etcd layout changed");
        }
        ExecutorService pool = Executors.newFixedThreadPool(PARALLEL_TXNS);
        try {
            List<Future<?>> batches = new ArrayList<>();
            for (int from = 1; from < count; from += SERVICES_PER_TXN) {
                int lo = from;
                int hi = Math.min(count, from + SERVICES_PER_TXN);
                batches.add(pool.submit(() -> {
                    putBatch(api, admin, t, lo, hi, endpoints);
                    return null;
                }));
            }
            for (Future<?> f : batches) f.get();
        } finally {
            pool.shutdownNow();
        }
        awaitListed(admin.services().inNamespace(ns), "Services", count);
        awaitListed(admin.discovery().v1().endpointSlices().inNamespace(ns), "EndpointSlices", count);
        return (System.nanoTime() - t0) / 1_000_000;
    }

    private record Templates(Service service, EndpointSlice slice, IPAddress ip) {
        String serviceKey(String name) { return "/registry/services/specs/" + service.getMetadata().getNamespace() + "/" + name; }

        String sliceKey(String name) { return "/registry/endpointslices/" + slice.getMetadata().getNamespace() + "/" + name; }

        String ipKey(String ip) { return "/registry/ipaddresses/" + ip; }
    }

    private static void putBatch(ApiServerProcess api, KubernetesClient admin, Templates t, int lo, int hi,
                                 IntFunction<List<String>> endpoints) throws IOException {
        String created = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        StringBuilder compare = new StringBuilder();
        StringBuilder success = new StringBuilder();
        for (int k = lo; k < hi; k++) {
            String name = "s" + k;
            String ip = clusterIP(k);
            Service s = new ServiceBuilder(t.service()).editMetadata().withName(name).withUid(UUID.randomUUID().toString())
                    .withResourceVersion(null).withCreationTimestamp(created).endMetadata()
                    .editSpec().withClusterIP(ip).withClusterIPs(ip).endSpec().build();
            EndpointSliceBuilder sb = new EndpointSliceBuilder(t.slice()).editMetadata().withName(name + "-1")
                    .withUid(UUID.randomUUID().toString()).withResourceVersion(null).withCreationTimestamp(created)
                    .addToLabels("kubernetes.io/service-name", name).endMetadata().withEndpoints();
            for (String a : endpoints.apply(k)) {
                sb.addNewEndpoint().withAddresses(a).withNewConditions().withReady(true).endConditions().endEndpoint();
            }
            IPAddress addr = new IPAddressBuilder(t.ip()).editMetadata().withName(ip).withUid(UUID.randomUUID().toString())
                    .withResourceVersion(null).withCreationTimestamp(created).endMetadata()
                    .editSpec().editParentRef().withName(name).endParentRef().endSpec().build();
            op(admin, compare, success, t.serviceKey(name), s);
            op(admin, compare, success, t.sliceKey(name + "-1"), sb.build());
            op(admin, compare, success, t.ipKey(ip), addr);
        }
        String answer = api.etcdPost("/v3/kv/txn", "{\"compare\":[" + compare + "],\"success\":[" + success + "]}");
        if (!answer.contains("\"succeeded\":true")) {
            throw new IOException("etcd refused the batch s" + lo + "..s" + (hi - 1) + " (a key already exists?): " + answer);
        }
    }

    /** Adds "put {@code key} = {@code object} as JSON" and "only if {@code key} does not exist yet". */
    private static void op(KubernetesClient admin, StringBuilder compare, StringBuilder success, String key, HasMetadata object) {
        String k = b64(key);
        if (!compare.isEmpty()) compare.append(',');
        compare.append("{\"key\":\"").append(k).append("\",\"target\":\"CREATE\",\"result\":\"EQUAL\",\"create_revision\":\"0\"}");
        if (!success.isEmpty()) success.append(',');
        success.append("{\"request_put\":{\"key\":\"").append(k).append("\",\"value\":\"")
                .append(b64(admin.getKubernetesSerialization().asJson(object))).append("\"}}");
    }

    private static boolean exists(ApiServerProcess api, String key) throws IOException {
        return api.etcdPost("/v3/kv/range", "{\"key\":\"" + b64(key) + "\",\"count_only\":true}").contains("\"count\":\"1\"");
    }

    /** Waits (bounded) until a paged list through the API server counts {@code expected} objects; fails with the count seen. */
    private static void awaitListed(Listable<? extends io.fabric8.kubernetes.api.model.KubernetesResourceList<?>> what,
                                    String kind, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        int seen;
        while (true) {
            seen = 0;
            String cont = null;
            do {
                var page = what.list(new ListOptionsBuilder().withLimit(5000L).withContinue(cont).build());
                seen += page.getItems().size();
                cont = page.getMetadata().getContinue();
            } while (cont != null && !cont.isEmpty());
            if (seen == expected || System.nanoTime() > deadline) break;
            Thread.sleep(500);
        }
        if (seen != expected) throw new AssertionError("the API server lists " + seen + " " + kind + ", " + expected + " were stored");
    }

    private static String b64(String s) { return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8)); }

    private static long ipv4(String dotted) {
        long v = 0;
        for (String part : dotted.split("\\.")) v = v << 8 | Integer.parseInt(part);
        return v;
    }
}
