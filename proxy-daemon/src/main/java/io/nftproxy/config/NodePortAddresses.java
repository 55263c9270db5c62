package io.nftproxy.config;

import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * kube-proxy's {@code nodePortAddresses}: which local addresses accept NodePorts. {@code primary}, each family's
 * first node IP, or CIDRs; a family without a CIDR accepts on every address, as kube-proxy does. Parsed once, from
 * the flag or the file; that {@code primary} stands alone is {@link ProxyConfig#validate()}'s rule.
 */
public record NodePortAddresses(boolean primary, List<IpPrefix> cidrs) {
    public static final String PRIMARY = "primary";
    public static final NodePortAddresses PRIMARY_IPS = new NodePortAddresses(true, List.of());

    public NodePortAddresses {
        cidrs = List.copyOf(cidrs);
    }

    /** Each value {@code primary} or a CIDR; none at all is {@code primary}, as kube-proxy defaults an empty list. */
    public static NodePortAddresses parse(String field, String flag, List<String> values) {
        boolean primary = false;
        List<IpPrefix> cidrs = new ArrayList<>();
        for (String v : values) {
            if (v.equals(PRIMARY)) {
                primary = true;
                continue;
            }
            try {
                cidrs.add(IpPrefix.parse(v));
            } catch (InvalidInputException e) {
                throw new ConfigException(field, flag, v, "'" + PRIMARY + "' or CIDRs such as 192.168.10.0/24");
            }
        }
        return new NodePortAddresses(primary || cidrs.isEmpty(), cidrs);
    }

    /** As given: {@code primary} and the CIDRs. */
    public List<String> values() {
        return Stream.concat(primary ? Stream.of(PRIMARY) : Stream.empty(), cidrs.stream().map(IpPrefix::toString)).toList();
    }

    /** The prefixes that accept NodePorts for a node with {@code nodeIPs}: each family's first for {@code primary}. */
    public List<IpPrefix> resolve(List<IpAddress> nodeIPs) {
        if (!primary) return cidrs;
        List<IpPrefix> out = new ArrayList<>();
        for (IpFamily f : IpFamily.values()) {
            nodeIPs.stream().filter(a -> a.family() == f).findFirst().ifPresent(a -> out.add(IpPrefix.host(a)));
        }
        return out;
    }

    @Override public String toString() { return String.join(",", values()); }
}
