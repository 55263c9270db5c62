package io.nftproxy.net;

import java.util.Locale;

/** The transport protocols a Service port may use. Anything else is rejected at validation. */
public enum Protocol {
    TCP, UDP, SCTP;

    /** The lowercase spelling used by nft ({@code meta l4proto tcp}) and in chain names. */
    public String nftName() { return name().toLowerCase(Locale.ROOT); }

    /** Parses the API spelling; a null or empty protocol means TCP, as the API defaults it. */
    public static Protocol fromApi(String s) {
        if (s == null || s.isEmpty()) return TCP;
        for (Protocol p : values()) {
            if (p.name().equals(s)) return p;
        }
        throw new InvalidInputException("protocol", s, "one of TCP, UDP, SCTP");
    }
}
