package io.nftproxy.nft;

/** One command of a transaction: a verb applied to an object. */
public record Command(Verb verb, NftObject object) {}
