package io.nftproxy.sync;

import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.net.IpFamily;

import java.time.Duration;

/**
 * What one sync of one family's table did.
 *
 * @param level              what the plan asked of this family: {@link SyncLevel#CONVERGE} read the kernel back,
 *                           the others committed the model's diff
 * @param commands           commands sent in the main transaction (0: nothing was sent)
 * @param parts              transactions of the main change the kernel committed: 1 for a change within
 *                           the table's command budget, more for a larger one cut by the splitter, 0 when
 *                           nothing was sent or the first part failed
 * @param staleChainsDeleted chains deleted by the separate stale-chain transaction before the main one
 * @param replaced           a converging sync found content nftproxy does not write and replaced the table wholesale
 * @param longestPart        the longest single transaction sent (one libnftables call, which includes its cache
 *                           listing before the batch): what other nftables users on the node may have waited for
 *                           the commit lock at most; zero when nothing was sent
 * @param errorKind          the failure's kind, null on success
 * @param error              the failure in one line (kind, nft's message, the failing command), null on success
 */
public record SyncResult(IpFamily family, SyncLevel level, int commands, int parts, int staleChainsDeleted, boolean replaced,
                         Duration duration, Duration longestPart, NftException.Kind errorKind, String error) {
    public boolean success() { return error == null; }

    @Override public String toString() {
        String what = family.nftFamily() + " kube-proxy: " + level.label() + " sync, "
                + commands + " commands" + (parts > 1 ? " in " + parts + " transactions (longest " + longestPart.toMillis() + " ms)" : "") + (staleChainsDeleted > 0 ? ", " + staleChainsDeleted + " stale chains deleted" : "")
                + (replaced ? ", foreign content replaced" : "") + ", " + duration.toMillis() + " ms";
        return success() ? what : what + ", FAILED: " + error;
    }
}
