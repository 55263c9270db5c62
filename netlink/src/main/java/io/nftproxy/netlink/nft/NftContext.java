package io.nftproxy.netlink.nft;

import jnr.ffi.Pointer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A checked libnftables context: output and errors buffered, every failure an {@link NftException}.
 *
 * <p>Thread-confined: a ctx belongs to the thread that created it and every call checks that. libnftables keeps
 * per-ctx state (buffers, the cache, flags) without locking, and the ctx's netlink socket lives in the network
 * namespace its creating thread was in (see {@link io.nftproxy.netlink.NetnsThread}). One ctx per thread.
 */
public final class NftContext implements AutoCloseable {
    private final LibNftables lib;
    private final Thread owner;
    private Pointer ctx;

    private NftContext(LibNftables lib, Pointer ctx) {
        this.lib = lib;
        this.ctx = ctx;
        this.owner = Thread.currentThread();
    }

    /** A new ctx owned by the calling thread, in the calling thread's network namespace. */
    public static NftContext open() {
        LibNftables lib = NftLibrary.get();
        Pointer p = lib.nft_ctx_new(LibNftables.NFT_CTX_DEFAULT);
        if (p == null) throw NftException.failed("nft_ctx_new returned NULL");
        NftContext c = new NftContext(lib, p);
        try {
            if (lib.nft_ctx_buffer_output(p) != 0 || lib.nft_ctx_buffer_error(p) != 0) {
                throw NftException.failed("could not buffer libnftables output");
            }
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** Runs a script as one netlink batch (atomic) and returns nft's output, empty for most commands. */
    public String run(String script) {
        return exec(script, false, 0, "run nft script");
    }

    /** Checks a script as {@code nft -c} does: the kernel validates the batch and commits nothing. */
    public void check(String script) {
        exec(script, true, 0, "check nft script");
    }

    /** Runs a {@code list} command ({@code "table ip kube-proxy"}, {@code "tables"}) with JSON output. */
    public String listJson(String what) {
        return exec("list " + what, false, LibNftables.NFT_CTX_OUTPUT_JSON, "list " + what);
    }

    private String exec(String script, boolean dryRun, int outputFlags, String context) {
        Pointer p = live();
        if (dryRun) lib.nft_ctx_set_dry_run(p, true);
        if (outputFlags != 0) lib.nft_ctx_output_set_flags(p, outputFlags);
        int rc;
        String out;
        String err;
        try {
            rc = lib.nft_run_cmd_from_buffer(p, script);
            // Fetching rewinds both buffers, so the next call starts clean even after a failure.
            out = lib.nft_ctx_get_output_buffer(p);
            err = lib.nft_ctx_get_error_buffer(p);
        } finally {
            if (dryRun) lib.nft_ctx_set_dry_run(p, false);
            if (outputFlags != 0) lib.nft_ctx_output_set_flags(p, 0);
        }
        if (rc != 0) throw locate(script, NftException.fromErrorText(context, err), context);
        return out == null ? "" : out;
    }

    /**
     * libnftables 1.0.6 reports an error in a multi-line buffer with the right column but under the buffer's
     * <em>first</em> line, and without a line number; from a file it names the right line. So on failure the
     * script is checked again from a temporary file (a dry run: nothing is committed) and that report is kept when
     * it agrees on the kind. Costs nothing on success.
     */
    private NftException locate(String script, NftException fromBuffer, String context) {
        if (script.indexOf('\n') < 0 || script.indexOf('\n') == script.length() - 1) return fromBuffer;
        Pointer p = live();
        Path file = null;
        try {
            file = Files.createTempFile("nftproxy-", ".nft");
            Files.writeString(file, script, StandardCharsets.UTF_8);
            lib.nft_ctx_set_dry_run(p, true);
            int rc = lib.nft_run_cmd_from_filename(p, file.toString());
            lib.nft_ctx_get_output_buffer(p);
            String err = lib.nft_ctx_get_error_buffer(p);
            if (rc == 0) return fromBuffer;
            NftException located = NftException.fromErrorText(context, err);
            return located.kind() == fromBuffer.kind() && located.failingLine() != null ? located : fromBuffer;
        } catch (IOException e) {
            return fromBuffer;
        } finally {
            lib.nft_ctx_set_dry_run(p, false);
            if (file != null) {
                try {
                    Files.deleteIfExists(file);
                } catch (IOException ignored) {
                    // a leftover temp file is harmless
                }
            }
        }
    }

    private Pointer live() {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("NftContext used from " + Thread.currentThread().getName()
                    + " but owned by " + owner.getName());
        }
        if (ctx == null) throw new IllegalStateException("NftContext is closed");
        return ctx;
    }

    /** Frees the ctx. Idempotent; must run on the owning thread. */
    @Override public void close() {
        if (ctx == null) return;
        Pointer p = live();
        ctx = null;
        lib.nft_ctx_free(p);
    }
}
