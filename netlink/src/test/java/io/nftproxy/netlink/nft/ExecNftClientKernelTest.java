package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.KernelNamespace;

import java.time.Duration;

class ExecNftClientKernelTest extends NftClientKernelContract {
    @Override NftClient client(KernelNamespace ns) { return ExecNftClient.inNamespace(ns.handle(), Duration.ofSeconds(30)); }
}
