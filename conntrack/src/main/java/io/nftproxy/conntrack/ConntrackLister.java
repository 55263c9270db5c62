package io.nftproxy.conntrack;

import io.nftproxy.service.ProxyState;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

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
            for (ProxyState s : Stream.of(v4, v6).filter(Objects::nonNull).toList()) {
                for (FlowEntry f : table.dump(s.family(), deadline)) index.match(f).ifPresent(out::add);
            }
        }
        return out;
    }
}
