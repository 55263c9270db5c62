package io.nftproxy.nft;

/** A chain; {@code hook} is null for a regular chain. */
public record Chain(String name, Hook hook) implements NftObject {
    public static Chain regular(String name) { return new Chain(name, null); }

    public boolean isBase() { return hook != null; }

    /** A base chain's type, hook and priority. The priority is kept numeric; the writer decides the spelling. */
    public record Hook(String type, String hook, int priority) {}
}
