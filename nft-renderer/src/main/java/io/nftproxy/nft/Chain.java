package io.nftproxy.nft;

/** A chain; {@code hook} is null for a regular chain, {@code comment} null for none. */
public record Chain(String name, Hook hook, String comment) implements NftObject {
    public static Chain regular(String name) { return new Chain(name, null, null); }

    public boolean isBase() { return hook != null; }

    /** A base chain's type, hook and priority. The priority is kept numeric; the writer decides the spelling. */
    public record Hook(String type, String hook, int priority) {}
}
