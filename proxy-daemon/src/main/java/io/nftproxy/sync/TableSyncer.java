package io.nftproxy.sync;

import io.nftproxy.diff.Differ;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.nft.DesiredTable;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.UnrecognisedRuleException;
import io.nftproxy.proxy.IpFamily;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Keeps one family's {@code kube-proxy} table equal to the desired model, one atomic transaction at a time. Not
 * thread-safe: one sync thread owns it (and the kernel).
 *
 * <p>A <b>full</b> sync reads the table back from the kernel and diffs against that, so whatever is already right
 * is left alone: after a restart, unchanged services keep their elements, chains and rules, and their packets and
 * conntrack flows never notice (restart adoption). A table holding something nftproxy never writes is replaced
 * wholesale. Full syncs run first, after any failure, when {@link #forceFullSync forced} (node addresses or
 * topology changed, tampering seen) and every {@code fullSyncInterval}. Every other sync is <b>partial</b>: a diff
 * against the last committed model, never reading the kernel; no change sends nothing at all.
 *
 * <p>Chains of removed services are flushed by the main transaction and deleted at least
 * {@link #STALE_CHAIN_GRACE} later by a transaction of their own: kernels before 6.2 refuse to delete a chain that
 * an element removed in the same batch still references (upstream kube-proxy waits the same way).
 *
 * <p>A caller that keeps the desired table incrementally ({@link io.nftproxy.render.IncrementalRenderer}) hands
 * partial syncs over as a ready diff with {@link #apply}: the syncer then never builds or diffs the whole table
 * on a partial sync, and asks the {@link DesiredModel} which stale chains are still wanted.
 *
 * <p>An nft failure never escapes: the kernel keeps its previous table (the commit is atomic), the failure is
 * logged in one line, counted, returned, and the next sync is full.
 */
public final class TableSyncer {
    private static final Logger log = LoggerFactory.getLogger(TableSyncer.class);

    public static final Duration STALE_CHAIN_GRACE = Duration.ofSeconds(1);
    /** kube-proxy's nftables mode re-syncs everything hourly too. */
    public static final Duration DEFAULT_FULL_SYNC_INTERVAL = Duration.ofHours(1);
    private static final int FOREIGN_ITEMS_LOGGED = 5;

    /** The desired table as an incremental model holds it, for {@link #apply}. */
    public interface DesiredModel {
        /** The whole table: O(size of the table), asked only for a full sync. */
        DesiredTable table();

        /** Whether the table holds this chain now. */
        boolean holdsChain(String chain);

        /** The transaction deleting those of {@code stale} the table no longer holds. */
        Transaction deleteChains(List<String> stale);
    }

    private final IpFamily family;
    private final NftClient client;
    private final Duration fullSyncInterval;

    /**
     * What the kernel holds after the last successful sync, stale chains aside; meaningless while needFull, and
     * null after an {@link #apply}, whose caller's model is then the only whole view.
     */
    private DesiredTable committed;
    /** Chains left flushed in the kernel, with when they went stale. */
    private final Map<String, Instant> staleChains = new LinkedHashMap<>();
    private boolean needFull = true;
    private Instant lastFull;
    private long failedTransactions;
    private long failedStaleDeletes;

    public TableSyncer(IpFamily family, NftClient client) { this(family, client, DEFAULT_FULL_SYNC_INTERVAL); }

    public TableSyncer(IpFamily family, NftClient client, Duration fullSyncInterval) {
        this.family = Objects.requireNonNull(family);
        this.client = Objects.requireNonNull(client);
        if (fullSyncInterval.isNegative() || fullSyncInterval.isZero()) throw new IllegalArgumentException("fullSyncInterval " + fullSyncInterval);
        this.fullSyncInterval = fullSyncInterval;
    }

    public IpFamily family() { return family; }

    /** The next sync reads the kernel back and converges from there. */
    public void forceFullSync() { needFull = true; }

    public boolean needsFullSync() { return needFull; }

    /** Whether a sync at {@code now} must be full: first sync, after a failure, forced, or the timer ran out. */
    public boolean fullSyncDue(Instant now) {
        return needFull || lastFull == null || !now.isBefore(lastFull.plus(fullSyncInterval));
    }

    /** Transactions (main or stale-chain) and kernel reads that failed, since this syncer was made. */
    public long failedTransactions() { return failedTransactions; }

    /** Of {@link #failedTransactions}, the stale-chain deletes. */
    public long failedStaleDeletes() { return failedStaleDeletes; }

    /** Chains the kernel holds flushed, waiting to be deleted. */
    public List<String> staleChains() { return List.copyOf(staleChains.keySet()); }

    /** Makes the kernel's table equal {@code desired}. {@code now} decides stale-chain age and the full-sync timer. */
    public SyncResult sync(DesiredTable desired, Instant now) {
        if (desired.family() != family) throw new IllegalArgumentException("table of " + desired.family() + " given to the " + family + " syncer");
        long start = System.nanoTime();
        // Without a committed model (the last syncs went through apply), only the kernel can say what is there.
        int staleDeleted = needFull || committed == null ? 0 : deleteStaleChains(c -> desired.chain(c) != null,
                due -> Differ.deleteChains(committed, due), now);
        boolean full = fullSyncDue(now) || committed == null;
        SyncResult.Kind kind = full ? SyncResult.Kind.FULL : SyncResult.Kind.PARTIAL;

        Transaction tx;
        List<String> newlyStale;
        boolean replaced = false;
        if (full) {
            DesiredTable kernel = null;
            try {
                kernel = client.readTable(family);
            } catch (UnrecognisedRuleException e) {
                replaced = true;
                log.warn("table {} kube-proxy holds {} item(s) nftproxy does not write; replacing the whole table: {}",
                        family.nftFamily(), e.items().size(), e.items().stream().limit(FOREIGN_ITEMS_LOGGED)
                                .map(UnrecognisedRuleException.Item::toString).collect(Collectors.joining("; ")));
            } catch (IllegalArgumentException e) {
                replaced = true;
                log.warn("table {} kube-proxy could not be read back ({}); replacing the whole table", family.nftFamily(), e.getMessage());
            } catch (NftException e) {
                return failed(kind, 0, staleDeleted, false, start, e, "reading the table back");
            }
            if (replaced) {
                tx = Differ.replacing(desired);
                newlyStale = List.of();
            } else {
                Differ.Diff d = Differ.diff(kernel == null ? null : AdoptedTable.of(kernel, desired), desired);
                tx = d.transaction();
                newlyStale = d.staleChains();
            }
        } else {
            Differ.Diff d = Differ.diff(committed, desired);
            tx = d.transaction();
            newlyStale = d.staleChains();
        }

        if (!tx.isEmpty()) {
            try {
                client.apply(tx);
            } catch (NftException e) {
                return failed(kind, tx.size(), staleDeleted, replaced, start, e, "applying the transaction");
            }
        }
        needFull = false;
        if (full) {
            lastFull = now;
            // The kernel's listing is the truth about which stale chains exist; keep the times we already knew.
            Map<String, Instant> known = new LinkedHashMap<>(staleChains);
            staleChains.clear();
            for (String c : newlyStale) staleChains.put(c, known.getOrDefault(c, now));
        } else {
            for (String c : newlyStale) staleChains.putIfAbsent(c, now);
        }
        staleChains.keySet().removeIf(c -> desired.chain(c) != null);
        // What the kernel now holds: the desired table plus the flushed, not yet deleted, stale chains.
        committed = Differ.committed(desired, List.copyOf(staleChains.keySet()));
        SyncResult r = new SyncResult(family, kind, tx.size(), staleDeleted, replaced, elapsed(start), null, null);
        if (full || log.isDebugEnabled()) log.info("{}", r);
        return r;
    }

    /**
     * A partial sync whose transaction a {@link DesiredModel} already computed from the previous desired table to
     * the new one; when a full sync is due, the model's whole table goes through {@link #sync} instead. The diff
     * is only right if the previous sync committed the model's previous table: any failure makes the next sync
     * full, and so does a sync in between that did not come from the same model.
     */
    public SyncResult apply(Differ.Diff diff, DesiredModel desired, Instant now) {
        if (diff.transaction().family() != family) throw new IllegalArgumentException("diff of " + diff.transaction().family() + " given to the " + family + " syncer");
        if (fullSyncDue(now)) return sync(desired.table(), now);
        long start = System.nanoTime();
        // From here on the caller's model is the only whole view; keeping ours up to date would cost O(table).
        committed = null;
        int staleDeleted = deleteStaleChains(desired::holdsChain, desired::deleteChains, now);
        if (needFull) return sync(desired.table(), now);
        Transaction tx = diff.transaction();
        if (!tx.isEmpty()) {
            try {
                client.apply(tx);
            } catch (NftException e) {
                return failed(SyncResult.Kind.PARTIAL, tx.size(), staleDeleted, false, start, e, "applying the transaction");
            }
        }
        for (String c : diff.staleChains()) staleChains.putIfAbsent(c, now);
        staleChains.keySet().removeIf(desired::holdsChain);
        SyncResult r = new SyncResult(family, SyncResult.Kind.PARTIAL, tx.size(), staleDeleted, false, elapsed(start), null, null);
        if (log.isDebugEnabled()) log.info("{}", r);
        return r;
    }

    /** Deletes chains stale for longer than the grace, in their own transaction; a failure makes this sync full. */
    private int deleteStaleChains(java.util.function.Predicate<String> wanted,
                                  java.util.function.Function<List<String>, Transaction> deleter, Instant now) {
        List<String> due = new ArrayList<>();
        for (Map.Entry<String, Instant> e : staleChains.entrySet()) {
            if (!wanted.test(e.getKey()) && !e.getValue().plus(STALE_CHAIN_GRACE).isAfter(now)) due.add(e.getKey());
        }
        if (due.isEmpty()) return 0;
        Transaction tx = deleter.apply(due);
        try {
            if (!tx.isEmpty()) client.apply(tx);
        } catch (NftException e) {
            failedTransactions++;
            failedStaleDeletes++;
            needFull = true;
            log.warn("deleting {} stale chain(s) from {} kube-proxy failed, next step is a full sync: kind={} {}",
                    due.size(), family.nftFamily(), e.kind(), e.getMessage());
            return 0;
        }
        if (committed != null) committed = Differ.withoutChains(committed, tx);
        // A due chain the differ kept is still in use after all; it stays stale and is retried.
        tx.commands().forEach(c -> staleChains.remove(((io.nftproxy.nft.Chain) c.object()).name()));
        return tx.size();
    }

    private SyncResult failed(SyncResult.Kind kind, int commands, int staleDeleted, boolean replaced, long start,
                              NftException e, String what) {
        failedTransactions++;
        needFull = true;
        String error = "kind=" + e.kind() + " " + e.getMessage();
        log.warn("{} sync of {} kube-proxy failed {} ({} commands); the kernel keeps its previous table, next sync is full: {}",
                kind.name().toLowerCase(java.util.Locale.ROOT), family.nftFamily(), what, commands, error);
        return new SyncResult(family, kind, commands, staleDeleted, replaced, elapsed(start), e.kind(), error);
    }

    private static Duration elapsed(long startNanos) { return Duration.ofNanos(System.nanoTime() - startNanos); }
}
