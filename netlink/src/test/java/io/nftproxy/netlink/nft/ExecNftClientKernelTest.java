package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.ScratchNetns;

import java.time.Duration;

class ExecNftClientKernelTest extends NftClientKernelContract {
    @Override NftClient client(ScratchNetns ns) { return ExecNftClient.inNamespace(ns.name(), Duration.ofSeconds(30)); }
}
