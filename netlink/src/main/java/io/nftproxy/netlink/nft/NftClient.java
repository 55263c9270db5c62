package io.nftproxy.netlink.nft;

import io.nftproxy.nft.TableContent;
import io.nftproxy.readback.KernelTableParser;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.UnrecognisedRuleException;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;

/**
 * The one seam between the proxy and the kernel's nftables. Implementations: {@link LibNftablesClient}
 * (in-process), {@link ExecNftClient} ({@code nft -f -}), and an in-memory fake for tests. Pick one with
 * {@link NftClients#createInNamespace}.
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

    /**
     * The table as the kernel holds it, read into the model, or <b>null when it does not exist</b>. The real clients
     * read {@link #listTableJson} through {@link KernelTableParser}; the fake hands out its model directly.
     *
     * @throws UnrecognisedRuleException the table holds something nftproxy never writes (someone else's rule)
     * @throws IllegalArgumentException  nft printed something that is not a listing of one {@code kube-proxy} table
     */
    default TableContent readTable(IpFamily family) throws UnrecognisedRuleException {
        String json = listTableJson(family);
        return json == null ? null : KernelTableParser.parse(json);
    }

    /** What this host's nft accepts; probed on first call, then cached. */
    Capabilities capabilities();

    /** One line for logs: which implementation, which nft, which namespace. */
    String describe();

    /** Releases native resources or threads, if any. Never touches the kernel's tables. */
    @Override default void close() {}
}
