package io.nftproxy.netlink.nft;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.Command;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.InMemoryTables;
import io.nftproxy.nft.KernelJsonListing;
import io.nftproxy.nft.TableSpec;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.UnrecognisedRuleException;
import io.nftproxy.nft.Verb;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.function.Predicate;

/**
 * An {@link NftClient} over {@link InMemoryTables}: transactions are applied atomically on a copy with the kernel's
 * refusals (not found, exists, busy, dangling references), which come back as {@link NftException}s classified
 * exactly as nft's own error text would be. For unit tests of everything above the kernel seam.
 *
 * <p>Besides the model it offers what a test needs to hurt the caller: injected transaction failures (the table is
 * left untouched, as the kernel's atomic commit does), and tampering as another process would do it (table
 * deleted, chain flushed, element removed, ruleset flushed, a foreign rule added).
 *
 * <p>{@link #listTableJson} prints the table as the kernel's {@code nft -j list table} would
 * ({@link KernelJsonListing}), foreign rules included as expressions nftproxy never writes, so the kernel contract
 * tests run against the fake too; {@link #readTable} hands out the model without the JSON round trip.
 */
public final class FakeNftClient implements NftClient {
    /** What nft prints for an injected failure: an errno the sync code has no special case for. */
    public static final String INJECTED_ERROR = "Cannot allocate memory";

    private final InMemoryTables tables = new InMemoryTables();
    private final Map<IpFamily, List<ForeignRule>> foreign = new EnumMap<>(IpFamily.class);
    private Predicate<Transaction> failWhen = tx -> false;
    private String failureText = INJECTED_ERROR;
    private long applyCalls;
    private long readCalls;
    private long commandsApplied;
    private long failures;
    private Transaction lastTransaction;

    /** Fails every transaction {@code failWhen} accepts, with {@link #INJECTED_ERROR}. */
    public synchronized FakeNftClient failWhen(Predicate<Transaction> p) {
        return failWhen(p, INJECTED_ERROR);
    }

    /**
     * Fails every transaction {@code failWhen} accepts, as the kernel would with {@code strerror} ("Operation not
     * permitted" gives a PERMISSION failure, for instance). The table is not changed.
     */
    public synchronized FakeNftClient failWhen(Predicate<Transaction> p, String strerror) {
        this.failWhen = Objects.requireNonNull(p);
        this.failureText = Objects.requireNonNull(strerror);
        return this;
    }

    /** A predicate that accepts each transaction with probability {@code p}, from a seeded generator. */
    public static Predicate<Transaction> randomly(long seed, double p) {
        Random rnd = new Random(seed);
        return tx -> rnd.nextDouble() < p;
    }

    @Override public synchronized void apply(Transaction tx) {
        if (tx.isEmpty()) return;
        applyCalls++;
        lastTransaction = tx;
        String context = "apply " + tx.size() + " commands to " + tx.family().nftFamily() + " " + TableContent.TABLE_NAME;
        if (failWhen.test(tx)) {
            failures++;
            String first = firstLine(tx.script(capabilities()));
            throw NftException.fromErrorText(context, "/dev/stdin:1:1-1: Error: Could not process rule: " + failureText
                    + "\n" + first + "\n");
        }
        try {
            tables.apply(tx);
        } catch (InMemoryTables.Refused r) {
            failures++;
            throw refusal(context, tx, r);
        }
        commandsApplied += tx.size();
        for (Command c : tx.commands()) {
            if (c.object() instanceof TableSpec && c.verb() == Verb.DELETE) foreign.remove(tx.family());
        }
        if (!tables.exists(tx.family())) foreign.remove(tx.family());
    }

    /** The refusal as nft reports it: the strerror of the errno, and the command that caused it with its line. */
    private NftException refusal(String context, Transaction tx, InMemoryTables.Refused r) {
        String command = r.getMessage().substring(r.errno().length() + 2);
        String[] lines = tx.script(capabilities()).split("\n");
        int lineNo = 1;
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].equals(command)) {
                lineNo = i + 1;
                break;
            }
        }
        return NftException.fromErrorText(context, "/dev/stdin:" + lineNo + ":1-1: Error: Could not process rule: "
                + strerror(r.errno()) + "\n" + command + "\n");
    }

    private static String strerror(String errno) {
        switch (errno) {
            case "ENOENT": return "No such file or directory";
            case "EEXIST": return "File exists";
            case "EBUSY": return "Device or resource busy";
            case "EOPNOTSUPP": return "Operation not supported";
            default: return errno;
        }
    }

    private static String firstLine(String script) {
        int nl = script.indexOf('\n');
        return nl < 0 ? script : script.substring(0, nl);
    }

    /** Null when the table does not exist; a foreign rule is listed as a counter, a statement nftproxy never writes. */
    @Override public synchronized String listTableJson(IpFamily family) {
        TableContent t = tables.dump(family);
        if (t == null) return null;
        String json = KernelJsonListing.of(t);
        List<ForeignRule> rules = foreign.getOrDefault(family, List.of());
        if (rules.isEmpty()) return json;
        StringBuilder extra = new StringBuilder();
        for (ForeignRule r : rules) {
            extra.append(", {\"rule\": {\"family\": \"").append(family.nftFamily()).append("\", \"table\": \"")
                    .append(TableContent.TABLE_NAME).append("\", \"chain\": ").append(io.nftproxy.readback.Json.write(r.chain()))
                    .append(", \"handle\": 0, \"expr\": [{\"counter\": {\"packets\": 0, \"bytes\": 0}}, {\"accept\": null}]}}");
        }
        return json.substring(0, json.length() - 2) + extra + "]}";
    }

    @Override public synchronized TableContent readTable(IpFamily family) throws UnrecognisedRuleException {
        readCalls++;
        TableContent t = tables.dump(family);
        List<ForeignRule> rules = foreign.getOrDefault(family, List.of());
        if (t != null && !rules.isEmpty()) {
            throw new UnrecognisedRuleException(t, rules.stream().map(r -> new UnrecognisedRuleException.Item(
                    "chain " + r.chain() + " rule (foreign)", "expression nftproxy never writes", r.text())).toList());
        }
        return t;
    }

    @Override public Capabilities capabilities() { return Capabilities.baseline(); }

    @Override public String describe() { return "in-memory fake (InMemoryTables)"; }

    // ---- what the test looks at ----

    /** The table as it stands, foreign content aside; null when it does not exist. */
    public synchronized TableContent dump(IpFamily family) { return tables.dump(family); }

    /** Non-empty transactions the caller sent, failed ones included. */
    public synchronized long applyCalls() { return applyCalls; }

    /** Tables read back by the caller. */
    public synchronized long readCalls() { return readCalls; }

    /** Commands in transactions that committed. */
    public synchronized long commandsApplied() { return commandsApplied; }

    /** Transactions refused, injected or by the model. */
    public synchronized long failures() { return failures; }

    /** The last non-empty transaction the caller sent, or null. */
    public synchronized Transaction lastTransaction() { return lastTransaction; }

    // ---- tampering, as another process would do it ----

    /** {@code nft delete table <family> kube-proxy}. */
    public synchronized void deleteTable(IpFamily family) {
        tamper(new Transaction(family).delete(new TableSpec(TableContent.TABLE_COMMENT)));
        foreign.remove(family);
    }

    /** {@code nft flush chain <family> kube-proxy <chain>}. */
    public synchronized void flushChain(IpFamily family, String chain) {
        tamper(new Transaction(family).flush(Chain.regular(chain)));
    }

    /** {@code nft delete element <family> kube-proxy <set> { <key> }}. */
    public synchronized void removeElement(IpFamily family, Element e) {
        tamper(new Transaction(family).delete(e));
    }

    /** {@code nft flush ruleset}: every table gone. */
    public synchronized void flushRuleset() {
        tables.flushRuleset();
        foreign.clear();
    }

    /**
     * Someone adds a rule nftproxy never writes: from now on {@link #readTable} reports it, until a transaction
     * deletes the table.
     */
    public synchronized void addForeignRule(IpFamily family, String chain, String ruleText) {
        if (!tables.exists(family)) throw new IllegalStateException("no table " + family.nftFamily() + " kube-proxy to tamper with");
        foreign.computeIfAbsent(family, f -> new ArrayList<>()).add(new ForeignRule(chain, ruleText));
    }

    private record ForeignRule(String chain, String text) {}

    private void tamper(Transaction tx) {
        try {
            tables.apply(tx);
        } catch (InMemoryTables.Refused r) {
            throw new IllegalStateException("tampering refused: " + r.getMessage(), r);
        }
    }
}
