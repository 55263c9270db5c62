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
 * paged lists with continue tokens, watches from a resource version (with bookmarks omitted), compaction that makes
 * older versions 410 Gone, a field selector on {@code metadata.name}, and 404 for collections it does not serve.
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
        String name = nameSelector(q);
        StringBuilder b = new StringBuilder();
        synchronized (this) {
            long listRv = q.containsKey("continue") ? Long.parseLong(q.get("continue").split(":")[0]) : rv;
            List<JsonNode> all = new ArrayList<>();
            for (JsonNode o : collections.get(path).values()) {
                if (name == null || name.equals(o.path("metadata").path("name").asString())) all.add(o);
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
        long from = Long.parseLong(q.get("resourceVersion"));
        long deadline = System.nanoTime() + Long.parseLong(q.getOrDefault("timeoutSeconds", "60")) * 1_000_000_000L;
        String name = nameSelector(q);
        x.getResponseHeaders().set("Content-Type", "application/json");
        x.sendResponseHeaders(200, 0);
        OutputStream out = x.getResponseBody();
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
                if (name != null && !name.equals(e.object.path("metadata").path("name").asString())) continue;
                out.write(("{\"type\":\"" + e.type + "\",\"object\":" + JSON.writeValueAsString(e.object) + "}\n").getBytes(StandardCharsets.UTF_8));
            }
            out.flush();
        }
    }

    private static String nameSelector(Map<String, String> q) {
        String f = q.get("fieldSelector");
        return f != null && f.startsWith("metadata.name=") ? f.substring("metadata.name=".length()) : null;
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
