package io.nftproxy.trace;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.Protocol;

import java.util.Objects;

/** The first packet of a new connection: where it comes from, where it is going, and where it enters the node. */
public record Packet(IpAddress src, IpAddress dst, Protocol proto, int dport, Origin origin) {
    public Packet {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(proto, "proto");
        Objects.requireNonNull(origin, "origin");
        if (src.family() != dst.family()) {
            throw new IllegalArgumentException("source " + src + " and destination " + dst + " are of different families");
        }
        if (dport < 1 || dport > 65535) throw new IllegalArgumentException("destination port " + dport + " outside 1..65535");
    }

    /** Parses both addresses; for tests and the CLI. */
    public static Packet of(Origin origin, String src, String dst, Protocol proto, int dport) {
        return new Packet(IpAddress.parse(src), IpAddress.parse(dst), proto, dport, origin);
    }

    @Override public String toString() {
        return proto.nftName() + " " + src + " -> " + dst.withPort(dport) + " (" + origin + ": " + origin.description() + ")";
    }
}
