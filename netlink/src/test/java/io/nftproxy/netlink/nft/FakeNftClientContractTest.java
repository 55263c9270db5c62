package io.nftproxy.netlink.nft;

/** The kernel contract against the in-memory kernel: runs everywhere, root or not. */
class FakeNftClientContractTest extends NftClientContract {
    @Override Session open() {
        FakeNftClient fake = new FakeNftClient();
        return new Session() {
            @Override public NftClient client() { return fake; }

            @Override public void close() {}
        };
    }
}
