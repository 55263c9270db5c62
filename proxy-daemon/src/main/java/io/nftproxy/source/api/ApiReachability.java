package io.nftproxy.source.api;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether the API server answers, as the watched kinds saw it last. Logs on a change of state only: one WARN when
 * the server becomes unusable or fails in a new way (refused and reset are one way: unreachable), one INFO when
 * every kind works again. An outage of hours is a handful of lines however often the watches retry.
 *
 * <p>The kinds retry on their own back-offs; the first one that gets through wakes the others ({@link #pause}), so
 * a server that comes back is listed by every kind at once rather than each at the end of its own wait.
 */
public final class ApiReachability {
    private static final Logger LOG = LoggerFactory.getLogger(ApiReachability.class);

    private final String url;
    private final String meanwhile;
    private final Map<String, ApiServer.Failure> problems = new ConcurrentHashMap<>();
    private final Object wake = new Object();
    /** A one-shot command fails at once on a {@link ApiServer.Failure#definite} cause and says so itself: no WARN. */
    private final boolean quietWhenDefinite;
    private String state;

    /** @param meanwhile what happens while the server is unusable, as the end of the WARN line */
    public ApiReachability(String url, String meanwhile) { this(url, meanwhile, false); }

    private ApiReachability(String url, String meanwhile, boolean quietWhenDefinite) {
        this.url = url;
        this.meanwhile = meanwhile;
        this.quietWhenDefinite = quietWhenDefinite;
    }

    /**
     * For a command that reads the cluster once and fails at once on a definite cause (its own error line names it):
     * only the causes it waits out are logged, so its output says the same whichever thread is faster.
     */
    public static ApiReachability oneShot(String url, String meanwhile) { return new ApiReachability(url, meanwhile, true); }

    /** {@code kind} failed during {@code what}; logged when the server's state is new. */
    public void failed(String kind, String what, ApiServer.Failure failure, Throwable cause) {
        problems.put(kind, failure);
        if (quietWhenDefinite && failure.definite()) return;
        synchronized (this) {
            if (Objects.equals(state, failure.category())) return;
            state = failure.category();
        }
        LOG.warn("API server unusable url={} kind={} during={} cause=\"{}\"; retrying with backoff up to {} s, {}",
                url, kind, what, failure.detail(), ListWatch.backoffCap(failure).toSeconds(), meanwhile);
        LOG.debug("API failure detail kind={}", kind, cause);
    }

    /** {@code kind} worked; logged when it was the last kind still failing. Wakes the kinds still waiting to retry. */
    public void ok(String kind) {
        if (problems.remove(kind) == null) return;
        synchronized (wake) {
            wake.notifyAll();
        }
        String was;
        synchronized (this) {
            if (!problems.isEmpty() || state == null) return;
            was = state;
            state = null;
        }
        LOG.info("API server usable again url={} (was: {})", url, was);
    }

    /** A retry's back-off: {@code millis}, or less when another kind gets through meanwhile. */
    void pause(long millis) throws InterruptedException {
        if (millis <= 0) return;
        synchronized (wake) {
            wake.wait(millis);
        }
    }

    /** The current problems by kind, each as its detail (empty when everything works). */
    public Map<String, String> problems() {
        Map<String, String> out = new java.util.HashMap<>();
        problems.forEach((k, f) -> out.put(k, f.detail()));
        return Map.copyOf(out);
    }

    /** The current failures by kind (empty when everything works). */
    public Map<String, ApiServer.Failure> failures() { return Map.copyOf(problems); }

    /** "API server URL unusable: CAUSE", each distinct cause once; null when every kind works. */
    public String describe() {
        Set<String> causes = new LinkedHashSet<>();
        problems.values().forEach(f -> causes.add(f.detail()));
        return causes.isEmpty() ? null : "API server " + url + " unusable: " + String.join("; ", causes);
    }
}
