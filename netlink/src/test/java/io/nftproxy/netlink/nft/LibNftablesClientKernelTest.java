package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.KernelNamespace;

class LibNftablesClientKernelTest extends NftClientKernelContract {
    @Override NftClient client(KernelNamespace ns) throws Exception { return LibNftablesClient.inNamespace(ns.handle()); }
}
