package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.ScratchNetns;

class LibNftablesClientKernelTest extends NftClientKernelContract {
    @Override NftClient client(ScratchNetns ns) throws Exception { return LibNftablesClient.inNamespace(ns.name()); }
}
