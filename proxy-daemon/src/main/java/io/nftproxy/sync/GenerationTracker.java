package io.nftproxy.sync;

import io.nftproxy.netlink.monitor.CommitLedger;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.net.IpFamily;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.nft.TableSpec;
import io.nftproxy.nft.Verb;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.UnrecognisedRuleException;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * An {@link NftClient} that knows, per family, the ruleset generation at which the kernel's table was exactly what
 * the sync meant, so that the periodic verification can skip the listing when nothing was committed since.
 *
 * <p>The proof rests on one kernel fact: the nf_tables generation of a network namespace grows by exactly one per
 * commit that changes anything, whoever commits and whatever table it touches. So:
 * <ul>
 *   <li>a listing with the same generation before and after it is the table at that generation, and what converge
 *       sends next is the diff from exactly that listing;</li>
 *   <li>a commit of ours that found the generation at the trusted value {@code g} and left it at {@code g + 1} was
 *       the only commit in between: the table is now what we sent on top of what we trusted, and the other family's
 *       table, which a one-family transaction never touches, is unchanged; a commit that replaces the whole table
 *       needs no trusted value before it;</li>
 *   <li>anything else (someone else committed, a reading failed, a refused commit moved the generation) forgets the
 *       trust, and the next verification reads the table back.</li>
 * </ul>
 * Someone else's commit to their own table would then cost a read-back of ours at the next verification. With the
 * nftables monitor's {@link CommitLedger}, it does not: when every commit since the trusted generation was seen whole
 * and none touched our table, the table is still what we committed, and the trust moves on to the current generation.
 * Anything the ledger cannot vouch for still forgets the trust: conservative, never wrong. Thread-safe (the early
 * read-back runs on a thread of its own).
 */
public final class GenerationTracker implements NftClient {
    /** The namespace's current ruleset generation; {@link io.nftproxy.netlink.nft.RulesetGeneration} in production. */
    @FunctionalInterface
    public interface Source {
        long current() throws Exception;
    }

    /**
     * What a verification found.
     *
     * @param unchanged true when the table is proven to be what we committed at generation {@code trusted}: the
     *                  generation has not moved since, or the monitor saw every commit since and none touched it
     * @param trusted   that generation, -1 when none is known
     * @param current   the generation now, -1 when it could not be read
     * @param detail    why the table is not proven unchanged; empty when it is
     */
    public record Verification(IpFamily family, boolean unchanged, long trusted, long current, String detail) {
        /** How the verification was settled, the metric's {@code path} label: generation, monitor or read_back. */
        public String path() {
            return !unchanged ? "read_back" : trusted == current ? "generation" : "monitor";
        }

        @Override public String toString() {
            String table = family.nftFamily() + " kube-proxy";
            if (!unchanged) return table + " must be read back: " + detail;
            if (trusted == current) return table + " unchanged since our commit at generation " + current + ", no listing needed";
            return table + " unchanged since our commit at generation " + trusted + ": the nftables monitor saw every commit up to "
                    + current + " and none touched it, no listing needed";
        }
    }

    private final NftClient client;
    private final Source source;
    private final CommitLedger ledger;
    private final Map<IpFamily, Long> trusted = new EnumMap<>(IpFamily.class);
    private String lastFailure = "";

    /** @param ledger the running nftables monitor's record of the namespace's commits */
    public GenerationTracker(NftClient client, Source source, CommitLedger ledger) {
        this.client = Objects.requireNonNull(client);
        this.source = Objects.requireNonNull(source);
        this.ledger = Objects.requireNonNull(ledger);
    }

    /** Whether {@code family}'s table is provably what we last committed, from one generation reading. */
    public Verification verify(IpFamily family) {
        long now = read();
        synchronized (this) {
            Long t = trusted.get(family);
            if (now < 0) return new Verification(family, false, t == null ? -1 : t, -1, "the ruleset generation could not be read (" + lastFailure + ")");
            if (t == null) return new Verification(family, false, -1, now, "no generation is known to hold what we committed");
            if (t == now || catchUp(family, now)) return new Verification(family, true, t, now, "");
            return new Verification(family, false, t, now, "the ruleset generation moved from " + t + " to " + now
                    + " since our last commit, and the nftables monitor cannot vouch for every commit in between (" + ledger + ")");
        }
    }

    @Override public void apply(Transaction tx) {
        long before = read();
        // Others' commits to their own tables since our last one keep the trust, moved on to now. Asked before our
        // commit: once the monitor has read ours too, the ledger can no longer vouch for the interval ending at before.
        if (before >= 0) synchronized (this) { for (IpFamily f : IpFamily.values()) catchUp(f, before); }
        try {
            client.apply(tx);
        } catch (RuntimeException e) {
            long after = read();
            // A refused batch is aborted and leaves the generation alone; if it moved, someone else committed.
            synchronized (this) {
                if (before < 0 || after != before) trusted.clear();
            }
            throw e;
        }
        long after = read();
        synchronized (this) {
            boolean onlyOurs = before >= 0 && after == CommitLedger.next(before);
            boolean replacing = replacesTable(tx);
            for (IpFamily f : IpFamily.values()) {
                Long t = trusted.get(f);
                if (onlyOurs && (t != null && t == before || replacing && f == tx.family())) trusted.put(f, after);
                else trusted.remove(f);
            }
        }
    }

    @Override public TableContent readTable(IpFamily family) throws UnrecognisedRuleException {
        long before = read();
        TableContent t;
        try {
            t = client.readTable(family);
        } catch (UnrecognisedRuleException | RuntimeException e) {
            synchronized (this) { trusted.remove(family); }
            throw e;
        }
        long after = read();
        synchronized (this) {
            if (before >= 0 && after == before) trusted.put(family, after);
            else trusted.remove(family);
        }
        return t;
    }

    @Override public String listTableJson(IpFamily family) { return client.listTableJson(family); }

    @Override public Capabilities capabilities() { return client.capabilities(); }

    @Override public String describe() { return client.describe(); }

    @Override public void close() { client.close(); }

    /**
     * A transaction that deletes the table (and makes it anew, as {@link io.nftproxy.diff.Differ#replacing} does) leaves
     * exactly what it sends, whatever was there: after it, a table that held someone else's rules is trusted again.
     */
    private static boolean replacesTable(Transaction tx) {
        return tx.commands().stream().anyMatch(c -> c.verb() == Verb.DELETE && c.object() instanceof TableSpec);
    }

    /**
     * Moves {@code family}'s trust from its generation to {@code now} when the ledger saw every commit in between and
     * none touched the table; true if it did. Called holding the lock.
     */
    private boolean catchUp(IpFamily family, long now) {
        Long t = trusted.get(family);
        if (t == null || t == now || !ledger.untouchedBetween(family, t, now)) return false;
        trusted.put(family, now);
        return true;
    }

    private long read() {
        try {
            return source.current();
        } catch (Exception e) {
            synchronized (this) { lastFailure = e.toString(); }
            return -1;
        }
    }
}
