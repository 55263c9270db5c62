package io.nftproxy.nft;

/** Anything a transaction command can act on. */
public sealed interface NftObject permits TableSpec, Chain, Rule, NftSet, Element {}
