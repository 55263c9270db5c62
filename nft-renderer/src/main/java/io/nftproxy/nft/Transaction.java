package io.nftproxy.nft;

import io.nftproxy.net.IpFamily;

import java.util.ArrayList;
import java.util.List;

/**
 * An ordered list of commands against one family's {@code kube-proxy} table. The kernel applies a transaction
 * atomically: all of it or none. It renders to the exact {@code nft -f} script, so it can be logged and replayed.
 */
public final class Transaction {
    private final IpFamily family;
    private final List<Command> commands = new ArrayList<>();

    public Transaction(IpFamily family) { this.family = family; }

    public IpFamily family() { return family; }

    public Transaction add(NftObject o) { return command(Verb.ADD, o); }
    public Transaction create(NftObject o) { return command(Verb.CREATE, o); }
    public Transaction flush(NftObject o) { return command(Verb.FLUSH, o); }
    public Transaction delete(NftObject o) { return command(Verb.DELETE, o); }

    public Transaction command(Verb verb, NftObject o) {
        commands.add(new Command(verb, o));
        return this;
    }

    public List<Command> commands() { return List.copyOf(commands); }

    public int size() { return commands.size(); }

    public boolean isEmpty() { return commands.isEmpty(); }

    /** The {@code nft -f} script, one command a line. */
    public String script(Capabilities caps) {
        StringBuilder sb = new StringBuilder(commands.size() * 96);
        NftSyntax syntax = new NftSyntax(family, caps);
        for (Command c : commands) {
            syntax.command(sb, c);
            sb.append('\n');
        }
        return sb.toString();
    }

    /**
     * The transaction that creates the whole table in a kernel that does not have it: table, sets and maps,
     * chains, rules, elements, in that order so every reference is defined before it is used.
     */
    public static Transaction creating(TableContent t) {
        Transaction tx = new Transaction(t.family());
        tx.add(new TableSpec(TableContent.TABLE_COMMENT));
        t.sets().values().forEach(tx::add);
        t.chains().values().forEach(tx::add);
        for (String c : t.chains().keySet()) t.rules(c).forEach(tx::add);
        t.allElements().forEach(tx::add);
        return tx;
    }
}
