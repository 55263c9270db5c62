package io.nftproxy.nft;

import io.nftproxy.net.Protocol;

/**
 * The packet fields our rules match on. The family decides whether addresses are spelled {@code ip} or {@code ip6}.
 * {@code DPORT} is the transport header's port whatever the protocol ({@code th dport}); the protocol-bound ports
 * ({@code tcp dport}, …) carry an implicit {@code meta l4proto} match, which the {@code flat} layout's data maps
 * need because nft cannot reference a {@code typeof … th dport} map from a later transaction.
 */
public enum Field {
    SADDR, DADDR, L4PROTO, DPORT, TCP_DPORT, UDP_DPORT, SCTP_DPORT;

    /** {@code tcp dport}, {@code udp dport} or {@code sctp dport}. */
    public static Field dport(Protocol p) {
        return switch (p) {
            case TCP -> TCP_DPORT;
            case UDP -> UDP_DPORT;
            case SCTP -> SCTP_DPORT;
        };
    }

    /** The protocol a protocol-bound port implies, or null for the other fields. */
    public Protocol impliedProtocol() {
        return switch (this) {
            case TCP_DPORT -> Protocol.TCP;
            case UDP_DPORT -> Protocol.UDP;
            case SCTP_DPORT -> Protocol.SCTP;
            default -> null;
        };
    }
}
