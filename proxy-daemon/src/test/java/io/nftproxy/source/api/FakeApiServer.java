package io.nftproxy.source.api;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small stand-in for kube-apiserver's list and watch over plain HTTP, for fast unit tests of {@link ListWatch}:
 * paged lists with continue tokens, watches from a resource version (with bookmarks omitted), streamed lists (a watch
 * with sendInitialEvents, ended by the initial-events-end bookmark) when {@link #streamLists} is on and a 422 for them
 * when it is off (as a server with its WatchList gate off answers), compaction that makes older versions 410 Gone,
 * the field selectors {@code metadata.name=} and {@code spec.clusterIP!=None}, and 404 for collections it does not
 * serve. Every request's path and query is recorded in {@link #requests}.
 * Real-server behaviour is tested against a real kube-apiserver in integration-tests.
 */
public final class FakeApiServer implements AutoCloseable {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private record Event(long rv, String type, JsonNode object) {}

    private final HttpServer server;
    private final Map<String, TreeMap<String, JsonNode>> collections = new HashMap<>();
    private final Map<String, List<Event>> events = new HashMap<>();
    private long rv = 100;
    private long compacted;
    private final java.util.Set<String> forbidden = java.util.concurrent.ConcurrentHashMap.newKeySet();
    public final AtomicInteger listRequests = new AtomicInteger();
    public final AtomicInteger watchRequests = new AtomicInteger();
    public final AtomicInteger streamedLists = new AtomicInteger();
    public final AtomicInteger refusedStreams = new AtomicInteger();
    /** Each request's path and raw query, in arrival order. */
    public final List<String> requests = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Whether a watch with sendInitialEvents is served (true) or refused with 422 (false, the default). */
    public volatile boolean streamLists;

    public FakeApiServer(int port, String... served) throws IOException {
        for (String p : served) {
            collections.put(p, new TreeMap<>());
            events.put(p, new ArrayList<>());
        }
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
        server.setExecutor(Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "fake-api");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/", this::handle);
        server.start();
    }

    public int port() { return server.getAddress().getPort(); }

    public String url() { return "http://127.0.0.1:" + port(); }

    public synchronized void put(String path, String json) {
        ObjectNode o = (ObjectNode) JSON.readTree(json);
        String version = Long.toString(++rv);
        ((ObjectNode) o.withObject("metadata")).put("resourceVersion", version);
        String key = key(o);
        boolean existed = collections.get(path).put(key, o) != null;
        events.get(path).add(new Event(rv, existed ? "MODIFIED" : "ADDED", o));
        notifyAll();
    }

    public synchronized void delete(String path, String namespace, String name) {
        JsonNode o = collections.get(path).remove(namespace + "/" + name);
        if (o == null) return;
        events.get(path).add(new Event(++rv, "DELETED", o));
        notifyAll();
    }

    /** Requests for {@code path} are refused with 403, as RBAC refuses a missing permission. */
    public void forbid(String path) { forbidden.add(path); }

    /** Older resource versions are gone: a watch from one of them gets 410. */
    public synchronized void compact() {
        compacted = rv;
        events.values().forEach(List::clear);
        notifyAll();
    }

    private static String key(JsonNode o) {
        JsonNode m = o.path("metadata");
        return (m.path("namespace").isString() ? m.path("namespace").asString() : "") + "/" + m.path("name").asString();
    }

    private void handle(HttpExchange x) throws IOException {
        try (x) {
            String path = x.getRequestURI().getPath().substring(1);
            Map<String, String> q = query(x.getRequestURI().getRawQuery());
            requests.add(path + (x.getRequestURI().getRawQuery() == null ? "" : "?" + x.getRequestURI().getRawQuery()));
            if (forbidden.contains(path)) {
                send(x, 403, "{\"kind\":\"Status\",\"code\":403,\"message\":\"" + path + " is forbidden: User cannot list resource\"}");
                return;
            }
            if (!collections.containsKey(path)) {
                send(x, 404, "{\"kind\":\"Status\",\"code\":404,\"message\":\"the server could not find the requested resource\"}");
                return;
            }
            if ("1".equals(q.get("watch"))) watch(x, path, q);
            else list(x, path, q);
        }
    }

    private void list(HttpExchange x, String path, Map<String, String> q) throws IOException {
        listRequests.incrementAndGet();
        int limit = Integer.parseInt(q.getOrDefault("limit", "0"));
        int from = q.containsKey("continue") ? Integer.parseInt(q.get("continue").split(":")[1]) : 0;
        StringBuilder b = new StringBuilder();
        synchronized (this) {
            long listRv = q.containsKey("continue") ? Long.parseLong(q.get("continue").split(":")[0]) : rv;
            List<JsonNode> all = new ArrayList<>();
            for (JsonNode o : collections.get(path).values()) {
                if (selected(q, o)) all.add(o);
            }
            int to = limit == 0 ? all.size() : Math.min(all.size(), from + limit);
            String cont = to < all.size() ? listRv + ":" + to : "";
            b.append("{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"").append(listRv)
                    .append("\",\"continue\":\"").append(cont).append("\"},\"items\":[");
            for (int i = from; i < to; i++) b.append(i > from ? "," : "").append(JSON.writeValueAsString(all.get(i)));
            b.append("]}");
        }
        send(x, 200, b.toString());
    }

    private void watch(HttpExchange x, String path, Map<String, String> q) throws IOException {
        watchRequests.incrementAndGet();
        boolean stream = "true".equals(q.get("sendInitialEvents"));
        if (stream && !streamLists) {
            refusedStreams.incrementAndGet();
            send(x, 422, "{\"kind\":\"Status\",\"code\":422,\"message\":\"ListOptions.meta.k8s.io \\\"\\\" is invalid: "
                    + "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled\"}");
            return;
        }
        long deadline = System.nanoTime() + Long.parseLong(q.getOrDefault("timeoutSeconds", "60")) * 1_000_000_000L;
        x.getResponseHeaders().set("Content-Type", "application/json");
        x.sendResponseHeaders(200, 0);
        OutputStream out = x.getResponseBody();
        long from;
        if (stream) {
            streamedLists.incrementAndGet();
            StringBuilder b = new StringBuilder();
            synchronized (this) {
                from = rv;
                for (JsonNode o : collections.get(path).values()) {
                    if (selected(q, o)) b.append("{\"type\":\"ADDED\",\"object\":").append(JSON.writeValueAsString(o)).append("}\n");
                }
            }
            b.append("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Bookmark\",\"metadata\":{\"resourceVersion\":\"").append(from)
                    .append("\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}\n");
            out.write(b.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
        } else {
            from = Long.parseLong(q.get("resourceVersion"));
        }
        long sent = from;
        while (System.nanoTime() < deadline) {
            List<Event> batch = new ArrayList<>();
            synchronized (this) {
                if (from < compacted) {
                    out.write("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"message\":\"too old resource version\"}}\n"
                            .getBytes(StandardCharsets.UTF_8));
                    out.flush();
                    return;
                }
                for (Event e : events.get(path)) if (e.rv > sent) batch.add(e);
                if (batch.isEmpty()) {
                    try {
                        wait(200);
                    } catch (InterruptedException e) {
                        return;
                    }
                    continue;
                }
            }
            for (Event e : batch) {
                sent = e.rv;
                if (!selected(q, e.object)) continue;
                out.write(("{\"type\":\"" + e.type + "\",\"object\":" + JSON.writeValueAsString(e.object) + "}\n").getBytes(StandardCharsets.UTF_8));
            }
            out.flush();
        }
    }

    /** Whether {@code o} passes the request's field selector (only the two forms the source uses). */
    private static boolean selected(Map<String, String> q, JsonNode o) {
        String f = q.get("fieldSelector");
        if (f == null) return true;
        if (f.startsWith("metadata.name=")) return f.substring("metadata.name=".length()).equals(o.path("metadata").path("name").asString());
        if (f.equals("spec.clusterIP!=None")) return !"None".equals(o.path("spec").path("clusterIP").asString(""));
        return true;
    }

    private static void send(HttpExchange x, int code, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().set("Content-Type", "application/json");
        x.sendResponseHeaders(code, b.length);
        x.getResponseBody().write(b);
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> out = new HashMap<>();
        if (raw == null) return out;
        for (String kv : raw.split("&")) {
            int i = kv.indexOf('=');
            if (i > 0) out.put(kv.substring(0, i), URLDecoder.decode(kv.substring(i + 1), StandardCharsets.UTF_8));
        }
        return out;
    }

    @Override public void close() { server.stop(0); }
}
