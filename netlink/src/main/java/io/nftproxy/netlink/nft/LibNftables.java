package io.nftproxy.netlink.nft;

import jnr.ffi.Pointer;
import jnr.ffi.annotations.Encoding;

/**
 * Raw binding to libnftables ({@code nftables/libnftables.h}), names verbatim, no logic. Use {@link NftContext},
 * which checks every return; obtain the instance from {@link NftLibrary#get()}.
 *
 * <p>The {@code const char*} the buffer getters return is only valid until the next call on the same ctx; jnr-ffi
 * copies it into a Java String at once. Strings cross as UTF-8 whatever the JVM's default charset.
 */
public interface LibNftables {
    /** {@code NFT_CTX_DEFAULT}: the only flag value {@code nft_ctx_new} accepts. */
    int NFT_CTX_DEFAULT = 0;
    /** {@code NFT_CTX_OUTPUT_JSON}, for {@link #nft_ctx_output_set_flags}. */
    int NFT_CTX_OUTPUT_JSON = 1 << 4;

    Pointer nft_ctx_new(int flags);

    void nft_ctx_free(Pointer ctx);

    int nft_ctx_buffer_output(Pointer ctx);

    int nft_ctx_buffer_error(Pointer ctx);

    @Encoding("UTF-8")
    String nft_ctx_get_output_buffer(Pointer ctx);

    @Encoding("UTF-8")
    String nft_ctx_get_error_buffer(Pointer ctx);

    void nft_ctx_output_set_flags(Pointer ctx, int flags);

    void nft_ctx_set_dry_run(Pointer ctx, boolean dry);

    int nft_run_cmd_from_buffer(Pointer ctx, @Encoding("UTF-8") String buf);

    int nft_run_cmd_from_filename(Pointer ctx, @Encoding("UTF-8") String filename);
}
