package io.nftproxy.sync;

import io.nftproxy.diff.Differ;
import io.nftproxy.diff.TransactionSplitter;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.nft.Chain;
import io.nftproxy.nft.Command;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.UnrecognisedRuleException;
import io.nftproxy.nft.Verb;
import io.nftproxy.net.IpFamily;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * One family's {@code kube-proxy} table in the kernel. It holds no model of the table: it either commits a diff
 * someone else computed ({@link #commit}), or converges on a whole desired table by reading the kernel back and
 * diffing against that ({@link #converge}), so that whatever is already right is left alone (after a restart,
 * unchanged services keep their elements, chains and rules, and their flows never notice). A table holding
 * something nftproxy never writes is replaced wholesale. Which of the two a sync does is {@link SyncPlanner}'s
 * decision. Not thread-safe: one sync thread owns it (and the kernel).
 *
 * <p>The one fact about the kernel it does keep is which chains it left flushed there: chains of removed
 * services are flushed by the main transaction and deleted at least {@link #STALE_CHAIN_GRACE} later by a
 * transaction of their own, because kernels before 6.2 refuse to delete a chain that an element removed in the
 * same batch still references (upstream kube-proxy waits the same way). {@link #nextStaleChainDeadline} tells the
 * sync loop when to come back for them.
 *
 * <p>A change of more than {@link #commandBudget} commands (a cold start, a read-back that found much to fix) is
 * cut by {@link TransactionSplitter} into transactions committed one after another, so that none holds the
 * nftables commit lock long enough to stall the node's other nftables users; a smaller one is one transaction.
 *
 * <p>An nft failure never escapes: the failed transaction changes nothing (each commit is atomic), the failure is
 * logged in one line, counted, and returned as a value. When part k of a cut change fails, parts before k stay
 * committed; the failure makes the next sync read the table back and converge from there ({@link SyncPlanner}).
 */
public final class KernelTable {
    private static final Logger LOG = LoggerFactory.getLogger(KernelTable.class);

    public static final Duration STALE_CHAIN_GRACE = Duration.ofSeconds(1);
    private static final int FOREIGN_ITEMS_LOGGED = 5;
    private static final Applied NOTHING_SENT = new Applied(0, 0, Duration.ZERO, null);
    /**
     * Commands per transaction above which a change is cut. Calibrated in the kernel (docs/benchmarks.md, "Cold
     * start in bounded transactions"): at 45k services × 2 endpoints in the fast layout, the kernel's batch call
     * for a part of this size took at most 127–188 ms (10,000: up to 221 ms; the unsplit cold start 6.3 s). Smaller
     * parts do not help: the last parts cost the kernel's validation of the whole reachable table at every commit.
     */
    public static final int DEFAULT_COMMAND_BUDGET = 5_000;

    private final IpFamily family;
    private final NftClient client;
    private final int commandBudget;
    /** Chains left flushed in the kernel, with when they went stale. */
    private final Map<String, Instant> staleChains = new LinkedHashMap<>();
    private long failedTransactions;
    private long failedStaleDeletes;
    private volatile ApplyProgress progress = ApplyProgress.NONE;
    /** A read-back started early (while the cluster is still being listed), for the first {@link #converge}. */
    private final AtomicReference<CompletableFuture<ReadBack>> early = new AtomicReference<>();

    /** What reading the table back found: a table (null: none), or content we do not write, or a failure. */
    private record ReadBack(TableContent table, String foreign, NftException failure) {}

    public KernelTable(IpFamily family, NftClient client) { this(family, client, DEFAULT_COMMAND_BUDGET); }

    public KernelTable(IpFamily family, NftClient client, int commandBudget) {
        if (commandBudget < 1) throw new IllegalArgumentException("command budget must be at least 1, got " + commandBudget);
        this.family = Objects.requireNonNull(family);
        this.client = Objects.requireNonNull(client);
        this.commandBudget = commandBudget;
    }

    /** Who is told of each committed part of a transaction that is cut into parts. */
    public void progress(ApplyProgress p) { progress = Objects.requireNonNull(p); }

    /** Transactions (main or stale-chain) and kernel reads that failed, since this was made. */
    long failedTransactions() { return failedTransactions; }

    /** Of {@link #failedTransactions}, the stale-chain deletes. */
    public long failedStaleDeletes() { return failedStaleDeletes; }

    /** Chains the kernel holds flushed, waiting to be deleted. */
    public List<String> staleChains() { return List.copyOf(staleChains.keySet()); }

    /** When the oldest flushed chain may be deleted; empty when none waits. */
    public Optional<Instant> nextStaleChainDeadline() {
        return staleChains.values().stream().min(Instant::compareTo).map(t -> t.plus(STALE_CHAIN_GRACE));
    }

    /**
     * Starts reading the table back now, on a thread of its own, so that the first {@link #converge} finds it done:
     * at a restart the kernel's listing and its parsing then overlap the listing of the cluster. Thread-safe.
     */
    public void readBackEarly() {
        CompletableFuture<ReadBack> f = new CompletableFuture<>();
        if (!early.compareAndSet(null, f)) return;
        // Whatever goes wrong completes f exceptionally, and converge reads again itself.
        f.completeAsync(this::read, r -> {
            Thread t = new Thread(r, "read-back-" + family.nftFamily());
            t.setDaemon(true);
            t.start();
        });
    }

    /** Someone else changed the table: an early read-back may predate that and must not be used. Thread-safe. */
    public void discardEarlyReadBack() { early.set(null); }

    /**
     * Commits a diff computed from what the kernel holds (the previous committed model) to the new table. Chains
     * past their grace are deleted first, in a transaction of their own; an empty diff reaches the kernel only for
     * that. A failure of either leaves the kernel's table as it was before that transaction.
     */
    public SyncResult commit(Differ.Diff diff, SyncLevel level, Instant now) {
        if (level == SyncLevel.CONVERGE) throw new IllegalArgumentException("a converging sync goes through converge()");
        if (diff.transaction().family() != family) throw new IllegalArgumentException("diff of " + diff.transaction().family() + " given to the " + family + " table");
        long start = System.nanoTime();
        int staleDeleted;
        try {
            staleDeleted = deleteStaleChains(now);
        } catch (NftException e) {
            failedStaleDeletes++;
            return failed(level, 0, NOTHING_SENT, 0, false, start, e, "deleting stale chains");
        }
        Transaction tx = diff.transaction();
        Applied a = apply(tx);
        if (a.refused() != null) return failed(level, tx.size(), a, staleDeleted, false, start, a.refused(), "applying the transaction");
        // A chain the transaction brings back is no longer stale.
        for (Command c : tx.commands()) if (c.verb() == Verb.ADD && c.object() instanceof Chain ch) staleChains.remove(ch.name());
        for (String c : diff.staleChains()) staleChains.putIfAbsent(c, now);
        SyncResult r = new SyncResult(family, level, tx.size(), a.committed(), staleDeleted, false, elapsed(start), a.longest(), null, null);
        if (LOG.isDebugEnabled()) LOG.debug("{}", r);
        return r;
    }

    /**
     * Makes the kernel's table equal {@code desired}, reading it back first and sending only the difference. The
     * kernel's listing is then the truth about which stale chains exist (the times already known are kept).
     */
    public SyncResult converge(TableContent desired, Instant now) {
        if (desired.family() != family) throw new IllegalArgumentException("table of " + desired.family() + " given to the " + family + " table");
        long start = System.nanoTime();
        ReadBack rb = takeEarlyReadBack();
        if (rb == null) rb = read();
        if (rb.failure() != null) return failed(SyncLevel.CONVERGE, 0, NOTHING_SENT, 0, false, start, rb.failure(), "reading the table back");
        TableContent kernel = rb.table();
        boolean replaced = rb.foreign() != null;
        if (replaced) LOG.warn("table {} kube-proxy {}; replacing the whole table", family.nftFamily(), rb.foreign());
        Differ.Diff diff = replaced ? new Differ.Diff(Differ.replacing(desired), List.of())
                : Differ.diff(kernel == null ? null : AdoptedTable.of(kernel, desired), desired);
        Transaction tx = diff.transaction();
        Applied a = apply(tx);
        if (a.refused() != null) return failed(SyncLevel.CONVERGE, tx.size(), a, 0, replaced, start, a.refused(), "applying the transaction");
        Map<String, Instant> known = new LinkedHashMap<>(staleChains);
        staleChains.clear();
        for (String c : diff.staleChains()) staleChains.put(c, known.getOrDefault(c, now));
        SyncResult r = new SyncResult(family, SyncLevel.CONVERGE, tx.size(), a.committed(), 0, replaced, elapsed(start), a.longest(), null, null);
        LOG.info("{}", r);
        return r;
    }

    /**
     * How a change went to the kernel: parts committed out of how many, the longest call among those sent, and the
     * refusal of the next, or null.
     */
    private record Applied(int committed, int parts, Duration longest, NftException refused) {}

    /** Sends {@code tx} unless it is empty, cut to the budget; stops at the first part the kernel refuses. */
    private Applied apply(Transaction tx) {
        if (tx.isEmpty()) return NOTHING_SENT;
        List<Transaction> parts = TransactionSplitter.split(tx, commandBudget);
        long longest = 0;
        int done = 0;
        for (int k = 0; k < parts.size(); k++) {
            long t = System.nanoTime();
            try {
                client.apply(parts.get(k));
            } catch (NftException e) {
                return new Applied(k, parts.size(), Duration.ofNanos(Math.max(longest, System.nanoTime() - t)), e);
            }
            longest = Math.max(longest, System.nanoTime() - t);
            done += parts.get(k).size();
            if (parts.size() > 1) progress.partCommitted(family, k + 1, parts.size(), done, tx.size());
        }
        return new Applied(parts.size(), parts.size(), Duration.ofNanos(longest), null);
    }

    /** The early read-back if one was made and succeeded; a failed one is not trusted, the kernel may say yes now. */
    private ReadBack takeEarlyReadBack() {
        CompletableFuture<ReadBack> pending = early.getAndSet(null);
        if (pending == null) return null;
        try {
            ReadBack rb = pending.join();
            return rb.failure() == null ? rb : null;
        } catch (CompletionException | CancellationException e) {
            LOG.debug("early read-back of {} kube-proxy failed error={}; reading again", family.nftFamily(), e.toString());
            return null;
        }
    }

    private ReadBack read() {
        try {
            return new ReadBack(client.readTable(family), null, null);
        } catch (UnrecognisedRuleException e) {
            return new ReadBack(null, "holds " + e.items().size() + " item(s) nftproxy does not write: " + e.items().stream()
                    .limit(FOREIGN_ITEMS_LOGGED).map(UnrecognisedRuleException.Item::toString).collect(Collectors.joining("; ")), null);
        } catch (IllegalArgumentException e) {
            return new ReadBack(null, "could not be read back (" + e.getMessage() + ")", null);
        } catch (NftException e) {
            return new ReadBack(null, null, e);
        }
    }

    /**
     * Deletes the chains past their grace, in one transaction; returns how many commands it sent. A chain flushed
     * "after" {@code now} was flushed before the wall clock stepped back: its grace is taken as run out, or it would
     * stay for as long as the step (an hour, say).
     */
    private int deleteStaleChains(Instant now) throws NftException {
        List<String> due = staleChains.entrySet().stream()
                .filter(e -> !e.getValue().plus(STALE_CHAIN_GRACE).isAfter(now) || e.getValue().isAfter(now))
                .map(Map.Entry::getKey).toList();
        if (due.isEmpty()) return 0;
        Transaction tx = Differ.deletingChains(family, due);
        client.apply(tx);
        due.forEach(staleChains::remove);
        return tx.size();
    }

    private SyncResult failed(SyncLevel level, int commands, Applied a, int staleDeleted, boolean replaced, long start,
                              NftException e, String what) {
        failedTransactions++;
        String error = "kind=" + e.kind() + " " + e.getMessage();
        String kept = a.committed() == 0 ? "the kernel keeps its previous table"
                : "parts 1-" + a.committed() + " of " + a.parts() + " stay committed, the next sync reads the table back";
        LOG.warn("{} sync of {} kube-proxy failed {} ({} commands); {}: {}",
                level.label(), family.nftFamily(), what + (a.parts() > 1 ? " (part " + (a.committed() + 1) + " of " + a.parts() + ")" : ""),
                commands, kept, error);
        return new SyncResult(family, level, commands, a.committed(), staleDeleted, replaced, elapsed(start), a.longest(), e.kind(), error);
    }

    private static Duration elapsed(long startNanos) { return Duration.ofNanos(System.nanoTime() - startNanos); }
}
