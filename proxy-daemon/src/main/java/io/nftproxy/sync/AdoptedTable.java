package io.nftproxy.sync;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Rule;
import io.nftproxy.readback.TableComparison;

import java.util.List;
import java.util.Objects;

/**
 * A table read back from the kernel, re-spelled where the kernel only reports the same thing differently from how
 * the model writes it, so that diffing it against the desired table rewrites nothing that is already right. Without
 * this, every converging sync (and every restart) would flush and re-add such chains under live traffic.
 *
 * <p>Two differences are only spelling:
 * <ul>
 *   <li>chain comments: nft 1.0.6 does not print them in JSON, so a chain read back without one is taken to carry
 *       the desired comment (same hook required);</li>
 *   <li>anonymous address sets in rules ({@code ip saddr != { ... }}): the kernel sorts and merges them, so a chain
 *       whose rules mean the same ({@link TableComparison#sameRules}) is taken to hold the desired rules.</li>
 * </ul>
 * Anything else that differs is a real difference and stays.
 */
final class AdoptedTable {
    private AdoptedTable() {}

    static TableContent of(TableContent kernel, TableContent desired) {
        if (kernel.chains().values().stream().allMatch(c -> respelledComment(c, desired) == c
                && respelledRules(c.name(), kernel, desired) == kernel.rules(c.name()))) {
            return kernel;
        }
        TableContent.Builder b = TableContent.builder(kernel.family());
        kernel.sets().values().forEach(b::set);
        for (Chain c : kernel.chains().values()) b.chain(respelledComment(c, desired));
        for (String c : kernel.chains().keySet()) respelledRules(c, kernel, desired).forEach(b::rule);
        kernel.allElements().forEach(b::element);
        return b.build();
    }

    private static Chain respelledComment(Chain c, TableContent desired) {
        Chain want = desired.chain(c.name());
        if (c.comment() == null && want != null && want.comment() != null && Objects.equals(c.hook(), want.hook())) {
            return new Chain(c.name(), c.hook(), want.comment());
        }
        return c;
    }

    private static List<Rule> respelledRules(String chain, TableContent kernel, TableContent desired) {
        List<Rule> have = kernel.rules(chain);
        if (desired.chain(chain) == null) return have;
        List<Rule> want = desired.rules(chain);
        return !have.equals(want) && TableComparison.sameRules(want, have) ? want : have;
    }
}
