package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;

class LibNftablesClientKernelTest extends NftClientKernelContract {
    @Override NftClient client(KernelNamespace ns) throws Exception { return LibNftablesClient.inNamespace(ns.handle()); }
}
