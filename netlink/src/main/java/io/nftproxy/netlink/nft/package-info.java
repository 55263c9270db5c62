/**
 * The nftables side of the kernel seam, layered as jnr-posix is:
 * <ol>
 * <li>{@link io.nftproxy.netlink.nft.LibNftables}: raw jnr-ffi binding, C names verbatim, no logic;</li>
 * <li>{@link io.nftproxy.netlink.nft.NftLibrary}: loaded once by soname, {@code isAvailable()} /
 *     {@code unavailabilityCause()} never throw;</li>
 * <li>{@link io.nftproxy.netlink.nft.NftContext}: checked, thread-confined ctx; failures become
 *     {@link io.nftproxy.netlink.nft.NftException} with a {@link io.nftproxy.netlink.nft.NftException.Kind};</li>
 * <li>{@link io.nftproxy.netlink.nft.NftClient}: what the proxy uses, implemented in-process
 *     ({@link io.nftproxy.netlink.nft.LibNftablesClient}) and by the binary
 *     ({@link io.nftproxy.netlink.nft.ExecNftClient}), chosen by {@link io.nftproxy.netlink.nft.NftClients};</li>
 * <li>{@link io.nftproxy.netlink.nft.CapabilitiesProbe}: what the host's nft accepts, by dry runs.</li>
 * </ol>
 */
package io.nftproxy.netlink.nft;
