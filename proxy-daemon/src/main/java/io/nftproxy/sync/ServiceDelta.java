package io.nftproxy.sync;

import io.nftproxy.net.IpFamily;
import io.nftproxy.service.ProxyState;

import java.util.Map;

/**
 * One Service's validated state before and after a partial sync, per family; a Service that did not exist on one
 * side has an empty state there. For consumers that follow the proxy state service by service (health checks,
 * conntrack cleanup) instead of rereading all of it after every sync.
 */
public record ServiceDelta(String service, Map<IpFamily, ProxyState> before, Map<IpFamily, ProxyState> after) {
    public ServiceDelta {
        before = Map.copyOf(before);
        after = Map.copyOf(after);
    }

    public ProxyState before(IpFamily f) { return before.get(f); }

    public ProxyState after(IpFamily f) { return after.get(f); }
}
