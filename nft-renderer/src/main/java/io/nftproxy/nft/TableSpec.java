package io.nftproxy.nft;

/** The table itself, as the subject of {@code add table} / {@code delete table}. */
public record TableSpec(String comment) implements NftObject {}
