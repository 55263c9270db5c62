/**
 * Conntrack after a sync: which UDP flows still point at endpoints that are gone ({@link
 * io.nftproxy.conntrack.StaleFlowFilter}, pure), deleting them over ctnetlink ({@link
 * io.nftproxy.conntrack.ConntrackCleaner}), and listing the flows that belong to services ({@link
 * io.nftproxy.conntrack.ConntrackLister}). Kernel access works in the network namespace of the calling thread; run
 * it on a {@link io.nftproxy.netlink.NetnsThread} to reach another one.
 */
package io.nftproxy.conntrack;
