package io.nftproxy.diff;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Transaction;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** A test's stand-in for a whole committed model, to check the differ's stale-chain protocol against it. */
public final class CommittedTables {
    private CommittedTables() {}

    /**
     * Deletes those stale chains of {@code committed} nothing uses any more; a chain that is active again (it has
     * rules, or a rule or element points at it) is kept, as the kernel would refuse it with EBUSY.
     */
    public static Transaction deleteChains(TableContent committed, List<String> chains) {
        Set<String> referenced = new HashSet<>();
        for (String c : committed.chains().keySet()) for (Rule r : committed.rules(c)) referenced.addAll(r.targets());
        for (Element e : committed.allElements()) if (e.value() != null && e.value().target() != null) referenced.add(e.value().target());
        return Differ.deletingChains(committed.family(), chains.stream()
                .filter(c -> committed.chain(c) != null && committed.rules(c).isEmpty() && !referenced.contains(c)).toList());
    }

    /** {@code committed} once {@code deleted} went through. */
    public static TableContent withoutChains(TableContent committed, Transaction deleted) {
        if (deleted.isEmpty()) return committed;
        Set<String> gone = new HashSet<>();
        deleted.commands().forEach(c -> gone.add(((Chain) c.object()).name()));
        TableContent.Builder b = TableContent.builder(committed.family());
        committed.sets().values().forEach(b::set);
        committed.chains().values().stream().filter(c -> !gone.contains(c.name())).forEach(b::chain);
        for (String c : committed.chains().keySet()) if (!gone.contains(c)) committed.rules(c).forEach(b::rule);
        committed.allElements().forEach(b::element);
        return b.build();
    }
}
