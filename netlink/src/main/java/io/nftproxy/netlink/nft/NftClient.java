package io.nftproxy.netlink.nft;

import io.nftproxy.nft.Transaction;
import io.nftproxy.proxy.Capabilities;
import io.nftproxy.proxy.IpFamily;

/**
 * The one seam between the proxy and the kernel's nftables. Implementations: {@link LibNftablesClient}
 * (in-process), {@link ExecNftClient} ({@code nft -f -}), and an in-memory fake for tests. Pick one with
 * {@link NftClients#create}.
 *
 * <p>Every failure is an {@link NftException}; test its {@link NftException#kind()}.
 */
public interface NftClient extends AutoCloseable {
    /**
     * Applies the transaction as one netlink batch: either every command takes effect or none does, and the
     * table is then exactly as before. An empty transaction does nothing.
     */
    void apply(Transaction tx);

    /**
     * {@code nft -j list table <family> kube-proxy}: the table as nft's JSON (with its {@code metainfo} object), or
     * <b>null when the table does not exist</b>. Other failures throw. Slow for large tables: not for every sync.
     */
    String listTableJson(IpFamily family);

    /** What this host's nft accepts; probed on first call, then cached. */
    Capabilities capabilities();

    /** One line for logs: which implementation, which nft, which namespace. */
    String describe();

    /** Releases native resources or threads, if any. Never touches the kernel's tables. */
    @Override default void close() {}
}
