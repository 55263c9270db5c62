package io.nftproxy.nft;

import java.util.Locale;

/** nft's command verbs, named exactly as nft spells them. */
public enum Verb {
    ADD, CREATE, INSERT, REPLACE, FLUSH, DELETE, DESTROY;

    public String nft() { return name().toLowerCase(Locale.ROOT); }
}
