package io.nftproxy.source;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.source.api.ApiServer;
import io.nftproxy.source.api.FakeApiServer;
import io.nftproxy.source.api.ListWatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Kubernetes source against a small fake of kube-apiserver's list and watch (fast, any machine): the start
 * gate holds until every page of every list is in the store, watch events follow, a 410 relists and removes what
 * was deleted meanwhile, an undecodable object is skipped alone, a server that is down at start is retried until it
 * answers; lists are streamed with kube-proxy's requests where the server allows it, paged where it refuses (the
 * fake's default, so the tests without "streamed" in their name exercise the paged lists). The same behaviour
 * against a real kube-apiserver is tested in integration-tests.
 */
class KubernetesSourceTest {
    private static final String SERVICES = "api/v1/services";
    private static final String SLICES = "apis/discovery.k8s.io/v1/endpointslices";
    private static final String NODES = "api/v1/nodes";
    private static final String CIDRS = "apis/networking.k8s.io/v1/servicecidrs";

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) closing.get(i).close();
    }

    static String service(String name, int n, int port) {
        return "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"namespace\":\"demo\",\"name\":\"" + name + "\"},"
                + "\"spec\":{\"type\":\"ClusterIP\",\"clusterIP\":\"172.30." + (n / 250) + "." + (n % 250 + 1) + "\","
                + "\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":" + port + ",\"targetPort\":8080}]}}";
    }

    static String slice(String service, int n) {
        return "{\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\",\"metadata\":{\"namespace\":\"demo\",\"name\":\""
                + service + "-1\",\"labels\":{\"kubernetes.io/service-name\":\"" + service + "\"}},\"addressType\":\"IPv4\","
                + "\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":8080}],"
                + "\"endpoints\":[{\"addresses\":[\"10.180." + (n / 250) + "." + (n % 250 + 1) + "\"],\"conditions\":{\"ready\":true},\"nodeName\":\"node-a\"}]}";
    }

    static final String NODE = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-a\",\"labels\":{\"topology.kubernetes.io/zone\":\"z1\"}}}";
    static final String OTHER_NODE = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-b\"}}";

    private FakeApiServer fake(int port, String... served) throws IOException {
        FakeApiServer f = new FakeApiServer(port, served);
        closing.add(f);
        return f;
    }

    private KubernetesSource source(String url, ClusterStore store, Duration nodeWait) {
        Config c = new ConfigBuilder(Config.empty()).withMasterUrl(url).build();
        KubernetesSource s = new KubernetesSource(ApiServer.of(c), store, Duration.ZERO, nodeWait);
        closing.add(s);
        return s;
    }

    private static FakeApiServer filled(FakeApiServer f, int n) {
        for (int i = 0; i < n; i++) {
            f.put(SERVICES, service("s" + i, i, 80));
            f.put(SLICES, slice("s" + i, i));
        }
        f.put(NODES, NODE);
        f.put(NODES, OTHER_NODE);
        return f;
    }

    @Test
    void theStoreIsReadyOnlyWithEveryPageOfEveryListAndTheNode() throws IOException {
        int objects = 2 * ListWatch.PAGE + 200;
        FakeApiServer api = filled(fake(0, SERVICES, SLICES, NODES, CIDRS), objects);
        ClusterStore store = new ClusterStore();
        // What the store holds the first time it says it is ready: a sync at that moment sees exactly this.
        AtomicReference<int[]> atReady = new AtomicReference<>();
        store.onChange(() -> {
            if (store.ready()) atReady.compareAndSet(null, new int[] {store.serviceCount(), store.endpointSliceCount(),
                    store.node("node-a") == null ? 0 : 1});
        });
        source(api.url(), store, Duration.ofSeconds(30)).start("node-a");
        await().atMost(Duration.ofSeconds(30)).until(store::ready);
        assertEquals(List.of(objects, objects, 1), List.of(atReady.get()[0], atReady.get()[1], atReady.get()[2]),
                "services, slices and the node when the store first became ready");
        assertEquals("z1", store.node("node-a").zone());
        assertEquals(null, store.node("node-b"), "only this node's object is watched");
        // Two pages and a bit: three list requests per kind for Services and slices.
        assertTrue(api.listRequests.get() >= 8, "paged lists: " + api.listRequests.get());
    }

    /**
     * The requests client-go 1.36's informers in kube-proxy make (one watch per kind that streams the list first, the
     * same server-side selectors), byte for byte but for the randomised timeout; no list request at all.
     */
    @Test
    void streamedListsAskWhatKubeProxysInformersAskOneRequestPerKind() throws IOException {
        FakeApiServer api = filled(fake(0, SERVICES, SLICES, NODES, CIDRS), 3);
        api.streamLists = true;
        api.put(SERVICES, "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"namespace\":\"demo\",\"name\":\"headless\"},"
                + "\"spec\":{\"clusterIP\":\"None\",\"ports\":[{\"port\":80}]}}");
        ClusterStore store = new ClusterStore();
        source(api.url(), store, Duration.ofSeconds(30)).start("node-a");
        await().atMost(Duration.ofSeconds(30)).until(store::ready);
        assertEquals(List.of("s0", "s1", "s2"), names(store), "headless Services are left out by the server");
        assertEquals(3, store.endpointSliceCount());
        assertEquals("z1", store.node("node-a").zone());

        String stream = "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=T";
        String notOtherProxies = "&labelSelector=%21service.kubernetes.io%2Fservice-proxy-name%2C%21service.kubernetes.io%2Fheadless";
        assertEquals(new java.util.TreeSet<>(List.of(
                        SERVICES + stream + notOtherProxies + "&fieldSelector=spec.clusterIP%21%3DNone",
                        SLICES + stream + notOtherProxies,
                        NODES + stream + "&fieldSelector=metadata.name%3Dnode-a",
                        CIDRS + stream)),
                new java.util.TreeSet<>(api.requests.stream().map(r -> r.replaceFirst("timeoutSeconds=(\\d+)", "timeoutSeconds=T")).toList()));
        assertTrue(api.requests.stream().allMatch(r -> {
            int t = Integer.parseInt(r.replaceFirst(".*timeoutSeconds=(\\d+).*", "$1"));
            return t >= 300 && t <= 600;
        }), "5 to 10 minutes, as client-go's reflector: " + api.requests);
        assertEquals(0, api.listRequests.get());

        // The same response goes on as the watch: a change arrives without another request.
        api.put(SERVICES, service("added", 10, 80));
        await().atMost(Duration.ofSeconds(10)).until(() -> names(store).contains("added"));
        assertEquals(4, api.requests.size(), "one request per kind: " + api.requests);
    }

    @Test
    void a410OnAStreamedListsWatchStreamsTheListAgainAndRemovesWhatWasDeletedMeanwhile() throws IOException {
        FakeApiServer api = filled(fake(0, SERVICES, SLICES, NODES, CIDRS), 3);
        api.streamLists = true;
        ClusterStore store = new ClusterStore();
        source(api.url(), store, Duration.ofSeconds(30)).start("node-a");
        await().atMost(Duration.ofSeconds(30)).until(store::ready);
        int streams = api.streamedLists.get();
        // The fake answers 410 to a watch that began before a change that compaction dropped.
        api.put(SERVICES, service("added", 10, 80));
        await().atMost(Duration.ofSeconds(10)).until(() -> names(store).contains("added"));
        api.compact();
        api.delete(SERVICES, "demo", "s1");
        api.put(SERVICES, service("late", 11, 80));
        await().atMost(Duration.ofSeconds(10)).until(() -> names(store).contains("late") && !names(store).contains("s1"));
        assertTrue(api.streamedLists.get() > streams, "a 410 streams the list again");
        assertEquals(0, api.listRequests.get());
    }

    @Test
    void aServerThatRefusesStreamedListsIsAskedOncePerKindThenListedInPages() throws IOException {
        FakeApiServer api = filled(fake(0, SERVICES, SLICES, NODES, CIDRS), 3);
        ClusterStore store = new ClusterStore();
        source(api.url(), store, Duration.ofSeconds(30)).start("node-a");
        await().atMost(Duration.ofSeconds(30)).until(store::ready);
        assertEquals(List.of("s0", "s1", "s2"), names(store));
        assertEquals(4, api.refusedStreams.get());
        assertEquals(4, api.listRequests.get());
        api.put(SERVICES, service("added", 10, 80));
        await().atMost(Duration.ofSeconds(10)).until(() -> names(store).contains("added"));
        api.compact();
        api.put(SERVICES, service("late", 11, 80));
        await().atMost(Duration.ofSeconds(10)).until(() -> names(store).contains("late"));
        assertTrue(api.listRequests.get() > 4, "a 410 lists again, in pages");
        assertEquals(4, api.refusedStreams.get(), "a refusal is remembered");
    }

    @Test
    void watchEventsFollowAndA410RelistsAndRemovesWhatWasDeletedMeanwhile() throws IOException {
        FakeApiServer api = filled(fake(0, SERVICES, SLICES, NODES, CIDRS), 3);
        ClusterStore store = new ClusterStore();
        source(api.url(), store, Duration.ofSeconds(30)).start("node-a");
        await().atMost(Duration.ofSeconds(30)).until(store::ready);

        api.put(SERVICES, service("added", 10, 80));
        await().atMost(Duration.ofSeconds(10)).until(() -> names(store).contains("added"));
        api.put(SERVICES, service("added", 10, 81));
        await().atMost(Duration.ofSeconds(10)).until(() -> store.snapshot().services().stream()
                .anyMatch(s -> s.meta().name().equals("added") && s.ports().get(0).port() == 81));
        api.delete(SLICES, "demo", "s0-1");
        await().atMost(Duration.ofSeconds(10)).until(() -> store.endpointSliceCount() == 2);

        // The watch is cut off from the history it needs: its events since are lost, only a fresh list knows.
        int lists = api.listRequests.get();
        api.compact();
        api.delete(SERVICES, "demo", "s1");
        api.put(SERVICES, service("late", 11, 80));
        await().atMost(Duration.ofSeconds(10)).until(() -> names(store).contains("late") && !names(store).contains("s1"));
        assertTrue(api.listRequests.get() > lists, "a 410 lists again");
        assertTrue(store.ready());
    }

    @Test
    void anUndecodableObjectIsSkippedAloneAndCounted() throws IOException {
        FakeApiServer api = filled(fake(0, SERVICES, SLICES, NODES, CIDRS), 5);
        api.put(SERVICES, "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"namespace\":\"demo\",\"name\":\"bad\"},"
                + "\"spec\":{\"ports\":\"not a list\"}}");
        ClusterStore store = new ClusterStore();
        KubernetesSource src = source(api.url(), store, Duration.ofSeconds(30));
        src.start("node-a");
        await().atMost(Duration.ofSeconds(30)).until(store::ready);
        assertEquals(5, store.serviceCount());
        assertFalse(names(store).contains("bad"));
        assertEquals(java.util.Map.of("Service", 1L), store.undecodableCounts());
    }

    @Test
    void aServerDownAtStartIsRetriedUntilItAnswersAndNothingIsReadyBefore() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        ClusterStore store = new ClusterStore();
        KubernetesSource src = source("http://127.0.0.1:" + port, store, Duration.ofSeconds(30));
        src.start("node-a");
        await().atMost(Duration.ofSeconds(10)).until(() -> !src.problems().isEmpty());
        assertTrue(src.problems().get("Service").contains("connection refused"), src.problems().toString());
        Thread.sleep(1_500);
        assertFalse(store.ready());

        filled(fake(port, SERVICES, SLICES, NODES, CIDRS), 20);
        await().atMost(Duration.ofSeconds(60)).until(store::ready);
        assertEquals(20, store.serviceCount());
        assertTrue(src.problems().isEmpty(), "recovered: " + src.problems());
    }

    @Test
    void noServiceCidrApiAndNoNodeObjectDoNotHoldTheFirstSyncForever() throws IOException {
        // An older cluster without networking.k8s.io/v1 ServiceCIDR, and a node whose object does not exist (yet).
        FakeApiServer api = fake(0, SERVICES, SLICES, NODES);
        api.put(SERVICES, service("s0", 0, 80));
        ClusterStore store = new ClusterStore();
        source(api.url(), store, Duration.ofSeconds(1)).start("node-a");
        await().atMost(Duration.ofSeconds(30)).until(store::ready);
        assertEquals(1, store.serviceCount());
        assertEquals(null, store.node("node-a"));
    }

    @Test
    void aNodeThatCannotBeListedIsWaitedForAtMostTheBound() throws Exception {
        // RBAC refuses the Node list, so it never completes: the bound alone opens the gate.
        FakeApiServer api = fake(0, SERVICES, SLICES, NODES, CIDRS);
        api.forbid(NODES);
        api.put(SERVICES, service("s0", 0, 80));
        ClusterStore store = new ClusterStore();
        source(api.url(), store, Duration.ofSeconds(2)).start("node-a");
        await().atMost(Duration.ofSeconds(10)).until(store::servicesAndSlicesListed);
        long t0 = System.nanoTime();
        assertFalse(store.ready(), "waiting for the Node");
        await().atMost(Duration.ofSeconds(10)).until(store::ready);
        assertTrue(System.nanoTime() - t0 >= 1_000_000_000L, "the gate waited for the node");
    }

    private static List<String> names(ClusterStore store) {
        return store.snapshot().services().stream().map(ServiceObject::meta).map(m -> m.name()).toList();
    }
}
