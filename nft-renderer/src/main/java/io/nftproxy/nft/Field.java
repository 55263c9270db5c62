package io.nftproxy.nft;

/** The packet fields our rules match on. The family decides whether addresses are spelled {@code ip} or {@code ip6}. */
public enum Field {
    SADDR, DADDR, L4PROTO, DPORT
}
