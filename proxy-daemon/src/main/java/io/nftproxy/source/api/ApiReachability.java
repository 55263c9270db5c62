package io.nftproxy.source.api;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether the API server answers, as the watched kinds saw it last. Logs on a change of state only: one WARN when
 * the server becomes unusable or fails in a new way (refused and reset are one way: unreachable), one INFO when
 * every kind works again. An outage of hours is a handful of lines however often the watches retry.
 */
public final class ApiReachability {
    private static final Logger LOG = LoggerFactory.getLogger(ApiReachability.class);

    private final String url;
    private final String meanwhile;
    private final Map<String, String> problems = new ConcurrentHashMap<>();
    private String state;

    /** @param meanwhile what happens while the server is unusable, as the end of the WARN line */
    public ApiReachability(String url, String meanwhile) {
        this.url = url;
        this.meanwhile = meanwhile;
    }

    /** {@code kind} failed during {@code what}; logged when the server's state is new. */
    public void failed(String kind, String what, ApiServer.Failure failure, Throwable cause) {
        problems.put(kind, failure.detail());
        synchronized (this) {
            if (Objects.equals(state, failure.category())) return;
            state = failure.category();
        }
        LOG.warn("API server unusable url={} kind={} during={} cause=\"{}\"; retrying with backoff up to {} s, {}",
                url, kind, what, failure.detail(), ListWatch.MAX_BACKOFF.toSeconds(), meanwhile);
        LOG.debug("API failure detail kind={}", kind, cause);
    }

    /** {@code kind} worked; logged when it was the last kind still failing. */
    public void ok(String kind) {
        if (problems.remove(kind) == null) return;
        String was;
        synchronized (this) {
            if (!problems.isEmpty() || state == null) return;
            was = state;
            state = null;
        }
        LOG.info("API server usable again url={} (was: {})", url, was);
    }

    /** The current problems by kind (empty when everything works). */
    public Map<String, String> problems() { return Map.copyOf(problems); }
}
