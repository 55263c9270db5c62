package io.nftproxy.conntrack;

import io.nftproxy.net.IpFamily;
import io.nftproxy.proxy.ProxyState;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Lists the conntrack flows that belong to services (TCP, UDP and SCTP), each with its service port: what
 * {@code nftproxy conntrack} shows. Read-only. Works in the network namespace of the calling thread.
 */
public final class ConntrackLister {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** The service flows of the families whose state is given (null: skip that family), in the kernel's order. */
    public List<ServiceFlow> list(ProxyState v4, ProxyState v6) throws IOException {
        ServiceFlowIndex index = ServiceFlowIndex.of(v4, v6);
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        List<ServiceFlow> out = new ArrayList<>();
        try (ConntrackTable table = ConntrackTable.open()) {
            if (v4 != null) collect(table.dump(IpFamily.IPV4, deadline), index, out);
            if (v6 != null) collect(table.dump(IpFamily.IPV6, deadline), index, out);
        }
        return out;
    }

    private static void collect(List<FlowEntry> flows, ServiceFlowIndex index, List<ServiceFlow> out) {
        for (FlowEntry f : flows) index.match(f).ifPresent(out::add);
    }
}
