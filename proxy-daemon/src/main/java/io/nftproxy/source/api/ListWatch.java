package io.nftproxy.source.api;

import io.nftproxy.cluster.ObjectMeta;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.MissingNode;

import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One watched kind, kept in step with the API server the way client-go's reflector does it: a list, handed over
 * whole ({@link Sink#replace}, so objects deleted while nobody watched disappear), then a watch from the list's
 * resource version whose events are decoded straight from the response stream, one object at a time. The list is
 * streamed, as client-go 1.35+ does by default (its WatchListClient): one watch that begins with every object as an
 * ADDED event, served from the API server's watch cache, marks the list's end with a bookmark and goes on as the
 * watch; a server that refuses that (WatchList turned off: 422) is listed in pages instead, then watched. A 410 Gone
 * lists again; any other failure is retried forever with capped exponential backoff, logged once per change of
 * cause through {@link ApiReachability}. Nothing is ever removed from the sink because the server is unreachable.
 *
 * <p>The watch asks the server to end it after 5 to 10 minutes (randomised, so a fleet of nodes does not renew in
 * step) and fails a read that waits longer than that: a connection that died without closing cannot hold updates
 * back for longer. {@link #probe} finds such a watch sooner.
 */
public final class ListWatch<T> implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ListWatch.class);
    /**
     * Objects per list request. Each page is a round trip and a fresh encoding by the API server, and the lists of a
     * first sync are on its critical path: at 45k Services × 2 endpoints against a real kube-apiserver, pages of 500
     * (90 per kind) took 7.0–8.4 s from "watching" to listed, pages of 5,000 3.5–5.3 s (docs/benchmarks.md). Objects
     * are decoded from the stream one at a time, so a page never sits in memory as text.
     */
    public static final int PAGE = 5_000;
    private static final Duration LIST_IDLE = Duration.ofSeconds(60);
    /** The longest wait for a list's or watch's response to begin. */
    private static final Duration RESPONSE_TIMEOUT = Duration.ofSeconds(30);
    static final Duration MIN_BACKOFF = Duration.ofMillis(500);
    /** The longest wait after an answer that refused us (401/403, 429, 5xx, an untrusted certificate): spare the server. */
    static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
    /**
     * The longest wait after a failure that never reached the server (refused, no route, no such name, no answer to
     * the connect): a retry costs the server nothing, and this bounds how long after it comes back the node still
     * waits (issue 23: the table complete within 5 s of the link's return). Any kind that gets through wakes the others.
     */
    static final Duration MAX_UNREACHED_BACKOFF = Duration.ofSeconds(2);
    /** The annotation on the bookmark that ends a streamed list's objects (KEP-3157, watch-list). */
    static final String INITIAL_EVENTS_END = "k8s.io/initial-events-end";

    /**
     * Where decoded objects go; called on this watch's own thread only.
     *
     * @param decode    decodes one object; a {@link RuntimeException} skips it (logged and counted by the caller's code)
     * @param replace   every object of the kind, after a list; the first call also means "listed"
     * @param skipped   an object could not be decoded; it is removed, so no stale good version lingers
     * @param notServed the server does not serve the kind at all (404 on the list)
     */
    public record Sink<T>(Function<JsonNode, T> decode, Consumer<List<T>> replace, Consumer<T> upsert,
                          Consumer<ObjectMeta> delete, BiConsumer<ObjectMeta, RuntimeException> skipped, Runnable notServed) {}

    private final String kind;
    private final String path;
    /** {@code &} and the selectors, or empty. */
    private final String selector;
    private final ApiServer api;
    private final ApiReachability reachability;
    private final Sink<T> sink;
    private final JsonMapper json = JsonMapper.builder().build();
    private final Thread thread;
    private volatile boolean running = true;
    /** The resource version the watch continues from; null means "list first". */
    private volatile String resourceVersion;
    private volatile InputStream open;
    private volatile boolean relistRequested;
    private volatile boolean notServed;
    /** Lists are streamed until the server refuses it once (its WatchList gate is off); then paged, for good. */
    private volatile boolean streamLists = true;
    // Lag probe state; probe thread only.
    private long pendingRv = -1;
    private long pendingSince;

    /**
     * @param path     the collection's path, e.g. {@code api/v1/services}
     * @param selector the query's selectors, already encoded (e.g. {@code labelSelector=...}), or empty
     */
    public ListWatch(String kind, String path, String selector, ApiServer api, ApiReachability reachability, Sink<T> sink) {
        this.kind = kind;
        this.path = path;
        this.selector = selector.isEmpty() ? "" : "&" + selector;
        this.api = api;
        this.reachability = reachability;
        this.sink = sink;
        this.thread = new Thread(this::loop, "watch-" + kind);
        thread.setDaemon(true);
    }

    /** {@code labelSelector=...} for the given selector expression. */
    public static String labelSelector(String expr) { return "labelSelector=" + encode(expr); }

    public static String fieldSelector(String expr) { return "fieldSelector=" + encode(expr); }

    private static String encode(String s) { return URLEncoder.encode(s, StandardCharsets.UTF_8); }

    public void start() { thread.start(); }

    private void loop() {
        long backoff = MIN_BACKOFF.toMillis();
        while (running) {
            String during = resourceVersion == null ? "list" : "watch";
            try {
                if (resourceVersion == null && streamLists) {
                    streamList();
                    if (notServed) return;
                    backoff = MIN_BACKOFF.toMillis();
                    continue;
                }
                if (resourceVersion == null) list();
                if (notServed) return;
                backoff = MIN_BACKOFF.toMillis();
                watch();
            } catch (Gone e) {
                LOG.info("resource version too old kind={} resourceVersion={}; listing again", kind, resourceVersion);
                resourceVersion = null;
            } catch (StreamRefused e) {
                LOG.info("kind={} is listed in pages: the API server refuses a streamed list ({})", kind, e.getMessage());
                streamLists = false;
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                if (!running) return;
                if (relistRequested) {
                    relistRequested = false;
                    resourceVersion = null;
                    continue;
                }
                ApiServer.Failure failure = e instanceof Status s ? new ApiServer.Failure("HTTP " + s.code, s.getMessage()) : ApiServer.failure(e);
                // A rotated token, an expired exec credential, a CA file put right: read the kubeconfig again.
                if ((e instanceof Status s && s.code == 401) || failure.category().equals("untrusted")) api.refreshCredentials();
                long cap = backoffCap(failure).toMillis();
                backoff = Math.min(backoff, cap);
                reachability.failed(kind, during, failure, e);
                try {
                    reachability.pause(ThreadLocalRandom.current().nextLong(backoff / 2, backoff + 1));
                } catch (InterruptedException ie) {
                    return;
                }
                backoff = Math.min(backoff * 2, cap);
            }
        }
    }

    /** The back-off's cap for {@code failure}: short while the server is not reached at all, long once it answers. */
    static Duration backoffCap(ApiServer.Failure failure) {
        return failure.beforeTheServer() ? MAX_UNREACHED_BACKOFF : MAX_BACKOFF;
    }

    private void list() throws IOException, InterruptedException {
        List<T> objects = new ArrayList<>();
        String cont = null;
        String listRv = null;
        while (running) {
            String q = path + "?limit=" + PAGE + selector + (cont == null ? "" : "&continue=" + encode(cont));
            JsonNode meta;
            try (InputStream body = request(q, LIST_IDLE)) {
                if (notServed) return;
                meta = readList(body, objects);
            } catch (Gone e) {
                if (cont == null) throw e;
                // The continue token expired between pages: the list starts over, from a new snapshot.
                objects.clear();
                cont = null;
                listRv = null;
                continue;
            }
            if (listRv == null) listRv = text(meta, "resourceVersion");
            cont = text(meta, "continue");
            if (cont == null || cont.isEmpty()) break;
        }
        if (!running) return;
        // Reachable first: whoever sees the store ready must not still see this kind's old problem.
        reachability.ok(kind);
        sink.replace().accept(objects);
        resourceVersion = listRv;
        LOG.info("listed kind={} objects={} resourceVersion={}", kind, objects.size(), listRv);
    }

    /**
     * A streamed list, then its watch on the same response: every object arrives as an ADDED event, a bookmark
     * annotated {@link #INITIAL_EVENTS_END} says they all have, and the events after it are the watch's. Asked for
     * without a resource version, so the server answers as fresh as a quorum read (from its watch cache once that has
     * caught up), as client-go's reflector asks at its start and after a 410. Returns when the watch ends; the
     * resource version is set only once every object is in.
     */
    private void streamList() throws IOException, InterruptedException {
        int timeout = watchTimeout();
        String q = path + "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
                + "&timeoutSeconds=" + timeout + selector;
        Map<String, T> objects = new LinkedHashMap<>();
        boolean listed = false;
        try (InputStream body = request(q, LIST_IDLE); JsonParser p = json.createParser(body)) {
            if (notServed) return;
            while (running && p.nextToken() == JsonToken.START_OBJECT) {
                JsonNode event = p.readValueAsTree();
                if (listed) {
                    handle(event);
                    continue;
                }
                String type = text(event, "type");
                JsonNode object = event.get("object");
                if (type == null || object == null || !object.isObject()) continue;
                switch (type) {
                    case "ADDED", "MODIFIED" -> {
                        T decoded = decode(object);
                        if (decoded == null) objects.remove(meta(object).key());
                        else objects.put(meta(object).key(), decoded);
                    }
                    case "DELETED" -> objects.remove(meta(object).key());
                    case "BOOKMARK" -> {
                        JsonNode m = object.path("metadata");
                        if (!"true".equals(text(m.path("annotations"), INITIAL_EVENTS_END))) continue;
                        String listRv = text(m, "resourceVersion");
                        reachability.ok(kind);
                        sink.replace().accept(new ArrayList<>(objects.values()));
                        objects = Map.of();
                        resourceVersion = listRv;
                        listed = true;
                        LOG.info("listed kind={} streamed=true resourceVersion={}", kind, listRv);
                        // Past the list, the stream is a watch: quiet for as long as nothing changes.
                        if (body instanceof StreamBody s) s.idleLimit(Duration.ofSeconds(timeout + 30));
                    }
                    default -> handle(event);   // ERROR: 410 lists again, anything else is retried
                }
            }
        }
        if (running && !listed) throw new IOException("the streamed list of " + kind + " ended before its last object");
    }

    /** A watch's timeout in seconds: 5 to 10 minutes, randomised so that a fleet of nodes does not renew in step. */
    private static int watchTimeout() { return ThreadLocalRandom.current().nextInt(300, 601); }

    /** Decodes a list page's items into {@code into}; returns its metadata (resourceVersion, continue). */
    private JsonNode readList(InputStream body, List<T> into) throws IOException {
        JsonNode meta = MissingNode.getInstance();
        try (JsonParser p = json.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) throw new IOException("list response is not a JSON object");
            while (p.nextToken() == JsonToken.PROPERTY_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                if ("metadata".equals(field) && t == JsonToken.START_OBJECT) {
                    meta = p.readValueAsTree();
                } else if ("items".equals(field) && t == JsonToken.START_ARRAY) {
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        T decoded = decode(p.readValueAsTree());
                        if (decoded != null) into.add(decoded);
                    }
                } else {
                    p.skipChildren();
                }
            }
        }
        return meta;
    }

    private void watch() throws IOException, InterruptedException {
        int timeout = watchTimeout();
        String q = path + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=" + timeout
                + "&resourceVersion=" + encode(resourceVersion) + selector;
        try (InputStream body = request(q, Duration.ofSeconds(timeout + 30));
             JsonParser p = json.createParser(body)) {
            reachability.ok(kind);
            while (running && p.nextToken() == JsonToken.START_OBJECT) {
                handle(p.readValueAsTree());
            }
        }
    }

    private void handle(JsonNode event) throws Gone, Status {
        String type = text(event, "type");
        JsonNode object = event.get("object");
        if (type == null || object == null || !object.isObject()) return;
        switch (type) {
            case "ADDED", "MODIFIED" -> {
                T decoded = decode(object);
                if (decoded != null) sink.upsert().accept(decoded);
            }
            case "DELETED" -> sink.delete().accept(meta(object));
            case "BOOKMARK" -> { }
            case "ERROR" -> {
                int code = object.path("code").asInt(0);
                if (code == 410) throw new Gone();
                throw new Status(code, "watch ended with an error: HTTP " + code + " " + text(object, "message"));
            }
            default -> { return; }
        }
        String rv = text(object.path("metadata"), "resourceVersion");
        if (rv != null) resourceVersion = rv;
    }

    private T decode(JsonNode object) {
        try {
            return sink.decode().apply(object);
        } catch (RuntimeException e) {
            sink.skipped().accept(meta(object), e);
            return null;
        }
    }

    /** Opens {@code q}; a non-200 answer becomes {@link Gone}, a 404 on a list marks the kind as not served. */
    private InputStream request(String q, Duration idle) throws IOException, InterruptedException {
        HttpResponse<InputStream> r = api.get(q, RESPONSE_TIMEOUT, idle);
        InputStream body = r.body();
        if (r.statusCode() == 200) {
            open = body;
            if (!running || relistRequested) body.close();
            return body;
        }
        String message;
        try (body) {
            message = statusMessage(body);
        }
        if (r.statusCode() == 410) throw new Gone();
        if ((r.statusCode() == 422 || r.statusCode() == 400) && q.contains("sendInitialEvents=")) {
            throw new StreamRefused("HTTP " + r.statusCode() + (message == null ? "" : ": " + message));
        }
        if (r.statusCode() == 404 && resourceVersion == null) {
            notServed = true;
            reachability.ok(kind);
            LOG.info("kind={} is not served by the API server (HTTP 404 on {}); not watched", kind, path);
            sink.notServed().run();
            return InputStream.nullInputStream();
        }
        throw new Status(r.statusCode(), "HTTP " + r.statusCode() + (message == null ? "" : ": " + message));
    }

    private String statusMessage(InputStream body) {
        try {
            return text(json.readTree(body.readNBytes(16 * 1024)), "message");
        } catch (Exception e) {
            return null;
        }
    }

    /**
     * Looks for a watch that stopped delivering without closing: a short watch from this one's resource version
     * sees whether the server has an event past it; if this watch has still not delivered that event one probe
     * later, it is dropped and the kind is listed again on a fresh connection (the fresh list also removes objects
     * whose delete events were lost). Called from one probe thread at a fixed interval.
     */
    public void probe(Duration interval) {
        try {
            long seen = number(resourceVersion);
            if (seen < 0 || notServed) return;
            if (pendingRv > 0) {
                if (seen >= pendingRv) {
                    pendingRv = -1;
                } else if (System.nanoTime() - pendingSince >= interval.toNanos()) {
                    LOG.warn("watch stopped delivering kind={} resourceVersion={} api={}; listing again on a new connection",
                            kind, seen, pendingRv);
                    pendingRv = -1;
                    relist();
                }
                return;
            }
            long next = firstEventAfter(resourceVersion);
            if (next > seen) {
                pendingRv = next;
                pendingSince = System.nanoTime();
            }
        } catch (RuntimeException e) {
            LOG.debug("watch probe failed kind={} error={}", kind, e.toString());
        }
    }

    /** Drops the current connection and lists again on a new client. */
    void relist() {
        api.renew();
        relistRequested = true;
        closeOpen();
    }

    private void closeOpen() {
        InputStream s = open;
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // A stream that fails to close is abandoned all the same.
            }
        }
    }

    /** The resource version of the first event after {@code from}, or -1 when none came within a few seconds. */
    private long firstEventAfter(String from) {
        String q = path + "?watch=1&timeoutSeconds=2&resourceVersion=" + encode(from) + selector;
        try {
            HttpResponse<InputStream> r = api.get(q, Duration.ofSeconds(3), Duration.ofSeconds(3));
            try (InputStream body = r.body(); JsonParser p = json.createParser(body)) {
                if (r.statusCode() == 410) return number(from) + 1;
                if (r.statusCode() != 200) return -1;
                while (p.nextToken() == JsonToken.START_OBJECT) {
                    JsonNode event = p.readValueAsTree();
                    String type = text(event, "type");
                    if ("ERROR".equals(type) && event.path("object").path("code").asInt() == 410) return number(from) + 1;
                    if ("ADDED".equals(type) || "MODIFIED".equals(type) || "DELETED".equals(type)) {
                        return number(text(event.path("object").path("metadata"), "resourceVersion"));
                    }
                }
            }
        } catch (java.net.http.HttpTimeoutException | StreamBody.IdleTimeoutException e) {
            // The pooled connection it went out on is probably dead: the next probe (and relist) starts clean.
            api.renew();
            return -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return -1;
    }

    private static ObjectMeta meta(JsonNode object) {
        JsonNode m = object.path("metadata");
        return ObjectMeta.of(text(m, "namespace"), text(m, "name"));
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || !v.isString() ? null : v.asString();
    }

    private static long number(String rv) {
        try {
            return rv == null ? -1 : Long.parseLong(rv);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The resource version asked for is gone (compacted): list again. */
    private static final class Gone extends IOException {
        Gone() { super("410 Gone"); }
    }

    /** The server does not stream lists (HTTP 422 or 400 on sendInitialEvents): list in pages. */
    private static final class StreamRefused extends IOException {
        StreamRefused(String message) { super(message); }
    }

    /** The server answered, but not with what was asked (401, 403, 500, ...). */
    private static final class Status extends IOException {
        final int code;

        Status(int code, String message) {
            super(message);
            this.code = code;
        }
    }

    @Override public void close() {
        running = false;
        thread.interrupt();
        closeOpen();
    }
}
