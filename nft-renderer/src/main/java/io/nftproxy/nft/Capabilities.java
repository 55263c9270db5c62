package io.nftproxy.nft;

/**
 * What the host's nftables accepts, probed once at start. The renderer reads it; it never probes itself.
 *
 * @param nftVersion             the version string reported by libnftables or {@code nft --version}
 * @param elementComments        whether set elements may carry comments (kube-proxy drops them otherwise)
 * @param symbolicOutputPriority whether {@code priority dstnat} parses on the output hook; nft 1.0.6 (Debian 12)
 *                               refuses it, so the numeric value -100 (and -110) is written instead
 */
public record Capabilities(String nftVersion, boolean elementComments, boolean symbolicOutputPriority) {
    /** What works on every nft the project supports (1.0.6 and later). The default without a probe. */
    public static Capabilities baseline() { return new Capabilities("1.0.6", true, false); }
}
