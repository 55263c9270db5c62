package io.nftproxy.diff;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.TableSpec;
import io.nftproxy.nft.Transaction;

import io.nftproxy.net.IpFamily;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Computes the smallest transaction that turns what the kernel holds ({@code applied}) into {@code desired}.
 * Only changed elements are sent, only chains whose rules changed are rewritten, and no changes means an empty
 * transaction. Chains that are no longer wanted are flushed now and returned as stale: they are deleted by a
 * later transaction, because kernels before 6.2 still count a reference from a map element removed in the
 * same batch (upstream kube-proxy does the same).
 */
public final class Differ {
    private Differ() {}

    /** The main transaction, and the chains it leaves flushed for a later delete. */
    public record Diff(Transaction transaction, List<String> staleChains) {
        public boolean isEmpty() { return transaction.isEmpty(); }
    }

    /**
     * @param applied what the kernel holds (last committed model, or the table read back), or null when the
     *                table does not exist
     */
    public static Diff diff(TableContent applied, TableContent desired) {
        if (applied != null && applied.family() != desired.family()) throw new IllegalArgumentException("family mismatch");
        if (applied == null) return new Diff(Transaction.creating(desired), List.of());
        Transaction tx = new Transaction(desired.family());

        // Sets whose definition changed are deleted and re-added; every chain that uses one is rewritten too.
        Set<String> recreatedSets = new LinkedHashSet<>();
        Set<String> deletedSets = new LinkedHashSet<>();
        for (NftSet old : applied.sets().values()) {
            NftSet now = desired.set(old.name());
            if (now == null) deletedSets.add(old.name());
            else if (!now.equals(old)) recreatedSets.add(old.name());
        }

        Set<String> rewritten = new LinkedHashSet<>();
        Set<String> added = new LinkedHashSet<>();
        Set<String> recreatedChains = new LinkedHashSet<>();
        for (Chain c : desired.chains().values()) {
            Chain old = applied.chain(c.name());
            if (old == null) {
                added.add(c.name());
            } else if (!Objects.equals(old.hook(), c.hook()) || !Objects.equals(old.comment(), c.comment())) {
                recreatedChains.add(c.name());
            } else if (!applied.rules(c.name()).equals(desired.rules(c.name())) || usesAny(desired.rules(c.name()), recreatedSets)) {
                rewritten.add(c.name());
            }
        }
        List<String> stale = new ArrayList<>();
        Set<String> flushStale = new LinkedHashSet<>();
        Set<String> goneSets = new HashSet<>(deletedSets);
        goneSets.addAll(recreatedSets);
        for (Chain c : applied.chains().values()) {
            if (desired.chain(c.name()) == null) {
                stale.add(c.name());
                if (!applied.rules(c.name()).isEmpty()) flushStale.add(c.name());
            } else if (!rewritten.contains(c.name()) && usesAny(applied.rules(c.name()), goneSets)) {
                // A chain still using a set about to be deleted must be emptied first, even if otherwise unchanged.
                rewritten.add(c.name());
            }
        }

        // 1. Empty what changes or goes away.
        for (String c : rewritten) tx.flush(Chain.regular(c));
        for (String c : flushStale) tx.flush(Chain.regular(c));
        for (String c : recreatedChains) {
            tx.flush(Chain.regular(c));
            tx.delete(applied.chain(c));
        }
        // 2. Remove elements that went away or changed value, from sets that stay.
        for (NftSet s : applied.sets().values()) {
            if (deletedSets.contains(s.name()) || recreatedSets.contains(s.name()) || isDynamic(s)) continue;
            Map<Element.ElementKey, Element> want = desired.elements(s.name());
            for (Element e : applied.elements(s.name()).values()) {
                Element w = want.get(e.id());
                if (w == null || !w.equals(e)) tx.delete(e);
            }
        }
        // 3. Sets: delete the unwanted, re-create the changed, add the new.
        for (String s : deletedSets) tx.delete(applied.set(s));
        for (String s : recreatedSets) tx.delete(applied.set(s));
        for (NftSet s : desired.sets().values()) {
            if (applied.set(s.name()) == null || recreatedSets.contains(s.name())) tx.add(s);
        }
        // 4. Chains and their rules, new before rewritten so every jump target exists.
        for (String c : added) tx.add(desired.chain(c));
        for (String c : recreatedChains) tx.add(desired.chain(c));
        for (String c : added) desired.rules(c).forEach(tx::add);
        for (String c : recreatedChains) desired.rules(c).forEach(tx::add);
        for (String c : rewritten) desired.rules(c).forEach(tx::add);
        // 5. Elements that are new or changed.
        for (NftSet s : desired.sets().values()) {
            boolean fresh = applied.set(s.name()) == null || recreatedSets.contains(s.name());
            Map<Element.ElementKey, Element> had = fresh ? Map.of() : applied.elements(s.name());
            for (Element e : desired.elements(s.name()).values()) {
                if (!e.equals(had.get(e.id()))) tx.add(e);
            }
        }
        return new Diff(tx, stale);
    }

    /** The transaction that deletes flushed chains nothing references any more (the stale chains of a diff). */
    public static Transaction deletingChains(IpFamily family, Collection<String> chains) {
        Transaction tx = new Transaction(family);
        for (String c : chains) tx.delete(Chain.regular(c));
        return tx;
    }

    /** What the kernel holds after {@link #diff} committed: the desired table plus the stale chains, empty. */
    public static TableContent committed(TableContent desired, List<String> staleChains) {
        if (staleChains.isEmpty()) return desired;
        TableContent.Builder b = desired.toBuilder();
        for (String c : staleChains) if (!b.hasChain(c)) b.chain(Chain.regular(c));
        return b.build();
    }

    /** The transaction that replaces the table wholesale: for a kernel table we cannot read or do not trust. */
    public static Transaction replacing(TableContent desired) {
        Transaction tx = new Transaction(desired.family());
        // "add" then "delete" makes the delete succeed whether or not the table exists (nft 1.0.6 has no destroy).
        tx.add(new TableSpec(TableContent.TABLE_COMMENT));
        tx.delete(new TableSpec(TableContent.TABLE_COMMENT));
        Transaction.creating(desired).commands().forEach(c -> tx.command(c.verb(), c.object()));
        return tx;
    }

    private static boolean isDynamic(NftSet s) { return s.flags().contains("dynamic"); }

    private static boolean usesAny(List<Rule> rules, Set<String> sets) {
        if (sets.isEmpty()) return false;
        for (Rule r : rules) for (String s : r.setRefs()) if (sets.contains(s)) return true;
        return false;
    }
}
