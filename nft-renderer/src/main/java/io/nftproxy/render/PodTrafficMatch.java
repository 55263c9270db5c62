package io.nftproxy.render;

import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.nft.Field;
import io.nftproxy.nft.Match;
import io.nftproxy.service.LocalTraffic;
import io.nftproxy.service.NodeContext;

import java.util.List;
import java.util.Optional;

/** The nft match for the node's local-traffic detector ({@link LocalTraffic}): what the rules test to tell pod traffic. */
final class PodTrafficMatch {
    private PodTrafficMatch() {}

    /**
     * The match for pod traffic ({@code negated}: for traffic not from a pod) of {@code family}; empty when the
     * detector knows nothing for it, and then no rule depends on it.
     */
    static Optional<Match> of(NodeContext node, IpFamily family, boolean negated) {
        if (node.localTraffic() instanceof LocalTraffic.ByInterface i) {
            return Optional.of(new Match.IifName(i.prefix() ? i.name() + "*" : i.name(), negated));
        }
        List<IpPrefix> sources = ((LocalTraffic.BySource) node.localTraffic()).cidrs(family);
        return sources.isEmpty() ? Optional.empty() : Optional.of(new Match.AddrIn(Field.SADDR, negated, sources));
    }
}
