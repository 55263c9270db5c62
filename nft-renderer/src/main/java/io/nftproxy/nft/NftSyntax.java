package io.nftproxy.nft;

import io.nftproxy.net.IpFamily;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The one place where nft text is assembled. Every identifier is checked against nft's name alphabet and every
 * comment is reduced to a safe alphabet and 128 UTF-8 bytes here, so nothing that reaches {@code nft -f} can
 * end a statement, open a string or start a comment, whatever the caller passed.
 */
public final class NftSyntax {
    /** nft's limit for comments (NFT_USERDATA_MAXLEN), in bytes. */
    public static final int MAX_COMMENT_BYTES = 128;
    /** NFT_NAME_MAXLEN is 256 including the terminating NUL. */
    public static final int MAX_NAME_BYTES = 255;
    private static final Pattern NAME = Pattern.compile("[A-Za-z][A-Za-z0-9_./-]*");

    private final IpFamily family;
    private final Capabilities caps;

    public NftSyntax(IpFamily family, Capabilities caps) {
        this.family = family;
        this.caps = caps;
    }

    /** Refuses any identifier nft could read as more than a name. */
    public static String name(String s) {
        if (s == null || s.isEmpty() || s.length() > MAX_NAME_BYTES || !NAME.matcher(s).matches()) {
            throw new IllegalArgumentException("unsafe nft identifier " + io.nftproxy.net.InvalidInputException.printable(s));
        }
        return s;
    }

    /**
     * Makes a comment safe: printable ASCII without {@code " \ ; #}, other characters replaced by {@code _}, then
     * cut to 128 bytes (ASCII, so bytes equal characters after the replacement).
     */
    public static String comment(String s) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), MAX_COMMENT_BYTES));
        s.codePoints().forEach(cp -> {
            boolean safe = cp >= 0x20 && cp < 0x7f && cp != '"' && cp != '\\' && cp != ';' && cp != '#';
            b.append(safe ? (char) cp : '_');
        });
        String out = b.length() > MAX_COMMENT_BYTES ? b.substring(0, MAX_COMMENT_BYTES) : b.toString();
        assert out.getBytes(StandardCharsets.UTF_8).length <= MAX_COMMENT_BYTES;
        return out;
    }

    public void command(StringBuilder sb, Command c) {
        sb.append(c.verb().nft()).append(' ');
        boolean adds = c.verb() == Verb.ADD || c.verb() == Verb.CREATE;
        String fam = family.nftFamily();
        String t = TableContent.TABLE_NAME;
        NftObject o = c.object();
        if (o instanceof TableSpec ts) {
                sb.append("table ").append(fam).append(' ').append(t);
                if (adds) {
                    sb.append(" { comment \"").append(comment(ts.comment())).append("\" ; }");
                }
        } else if (o instanceof Chain ch) {
                sb.append("chain ").append(fam).append(' ').append(t).append(' ').append(name(ch.name()));
                if ((ch.isBase() || ch.comment() != null) && adds) {
                    sb.append(" {");
                    Chain.Hook h = ch.hook();
                    if (h != null) {
                        sb.append(" type ").append(h.type()).append(" hook ").append(h.hook()).append(" priority ")
                                .append(priority(h)).append(" ;");
                    }
                    if (ch.comment() != null) sb.append(" comment \"").append(comment(ch.comment())).append("\" ;");
                    sb.append(" }");
                }
        } else if (o instanceof Rule r) {
                sb.append("rule ").append(fam).append(' ').append(t).append(' ').append(name(r.chain())).append(' ');
                rule(sb, r);
        } else if (o instanceof NftSet s) {
                sb.append(s.isMap() ? "map " : "set ").append(fam).append(' ').append(t).append(' ').append(name(s.name()));
                if (adds) setBody(sb, s);
        } else if (o instanceof Element e) {
                sb.append("element ").append(fam).append(' ').append(t).append(' ').append(name(e.set())).append(" { ");
                element(sb, e, adds);
                sb.append(" }");
        }
    }

    /**
     * Symbolic priorities where every supported nft parses them, as kube-proxy writes them; the numeric value where
     * nft 1.0.6 refuses the symbol ({@code dstnat} on the output hook).
     */
    String priority(Chain.Hook h) {
        boolean outputNat = h.hook().equals("output") && (h.priority() == -100 || h.priority() == -110);
        if (outputNat && !caps.symbolicOutputPriority()) return Integer.toString(h.priority());
        return switch (h.priority()) {
            case 0 -> "filter";
            case -100 -> "dstnat";
            case -110 -> "dstnat - 10";
            case 100 -> "srcnat";
            default -> Integer.toString(h.priority());
        };
    }

    private void setBody(StringBuilder sb, NftSet s) {
        if (s.typeof() != null) {
            sb.append(" { typeof ");
            fields(sb, s.typeof().key());
            sb.append(" . numgen random mod ").append(s.typeof().numgenModulus()).append(" : ");
            fields(sb, s.typeof().data());
        } else {
            sb.append(" { type ").append(String.join(" . ", s.keyType()));
            if (s.isMap()) sb.append(" : ").append(s.valueType());
        }
        sb.append(" ;");
        if (!s.flags().isEmpty()) sb.append(" flags ").append(String.join(",", s.flags())).append(" ;");
        if (s.timeoutSeconds() > 0) sb.append(" timeout ").append(s.timeoutSeconds()).append("s ;");
        if (s.comment() != null) sb.append(" comment \"").append(comment(s.comment())).append("\" ;");
        sb.append(" }");
    }

    private void element(StringBuilder sb, Element e, boolean withPayload) {
        join(sb, e.key(), " . ", v -> value(sb, v));
        if (!withPayload) return;
        if (e.comment() != null && caps.elementComments()) sb.append(" comment \"").append(comment(e.comment())).append('"');
        if (e.value() != null) {
            sb.append(" : ");
            verdict(sb, e.value());
        }
        if (e.data() != null) sb.append(" : ").append(e.data().ip()).append(" . ").append(e.data().port());
    }

    public static void value(StringBuilder sb, Value v) {
        if (v instanceof Value.Addr a) sb.append(a.ip());
        else if (v instanceof Value.Proto p) sb.append(p.protocol().nftName());
        else if (v instanceof Value.Port p) sb.append(p.port());
        else if (v instanceof Value.Index i) sb.append(i.index());
    }

    /** The rule body as written after {@code add rule <family> <table> <chain>}. */
    public String ruleText(Rule r) {
        StringBuilder sb = new StringBuilder();
        rule(sb, r);
        return sb.toString();
    }

    private void rule(StringBuilder sb, Rule r) {
        join(sb, r.matches(), " ", m -> match(sb, m));
        if (!r.matches().isEmpty()) sb.append(' ');
        join(sb, r.statements(), " ", s -> statement(sb, s));
        if (r.comment() != null) sb.append(" comment \"").append(comment(r.comment())).append('"');
    }

    private void match(StringBuilder sb, Match m) {
        if (m instanceof Match.CtStateNew) {
            sb.append("ct state new");
        } else if (m instanceof Match.CtStatusDnat) {
            sb.append("ct status dnat");
        } else if (m instanceof Match.SetLookup l) {
                fields(sb, l.fields());
                sb.append(l.negated() ? " != @" : " @").append(name(l.set()));
        } else if (m instanceof Match.AddrIn a) {
                field(sb, a.field());
                sb.append(a.negated() ? " != " : " ");
                if (a.prefixes().size() == 1) {
                    sb.append(a.prefixes().get(0));
                } else {
                    sb.append("{ ");
                    join(sb, a.prefixes(), ", ", sb::append);
                    sb.append(" }");
                }
        } else if (m instanceof Match.ProtoIs p) {
            sb.append("meta l4proto ").append(p.protocol().nftName());
        } else if (m instanceof Match.IifName i) {
            sb.append("iifname ").append(i.negated() ? "!= " : "").append('"').append(i.name()).append('"');
        } else if (m instanceof Match.FibLocal f) {
            sb.append("fib ").append(f.field() == Field.SADDR ? "saddr" : "daddr").append(" type local");
        } else if (m instanceof Match.MarkBits mb) {
            sb.append("mark and ").append(hex(mb.mask())).append(" != 0");
        } else if (m instanceof Match.NumgenIs n) {
            sb.append("numgen random mod ").append(n.modulus()).append(' ').append(n.value());
        }
    }

    private void statement(StringBuilder sb, Statement s) {
        if (s instanceof Statement.Decide d) {
            verdict(sb, d.verdict());
        } else if (s instanceof Statement.Reject) {
            sb.append("reject");
        } else if (s instanceof Statement.VmapLookup v) {
                fields(sb, v.fields());
                sb.append(" vmap @").append(name(v.map()));
        } else if (s instanceof Statement.NumgenVmap n) {
            numgenMap(sb, "vmap", n.targets(), v -> verdict(sb, v));
        } else if (s instanceof Statement.MarkOr m) {
            sb.append("mark set mark or ").append(hex(m.mark()));
        } else if (s instanceof Statement.MarkXor m) {
            sb.append("mark set mark xor ").append(hex(m.mark()));
        } else if (s instanceof Statement.Masquerade) {
            sb.append("masquerade fully-random");
        } else if (s instanceof Statement.Dnat d) {
            dnat(sb, d);
        } else if (s instanceof Statement.DnatMap d) {
            sb.append("dnat ").append(family.nftFamily()).append(" addr . port to ");
            fields(sb, d.key());
            sb.append(d.key().isEmpty() ? "" : " . ").append("numgen random mod ").append(d.numgenModulus())
                    .append(" map @").append(name(d.map()));
        } else if (s instanceof Statement.UpdateSet u) {
                sb.append("update @").append(name(u.set())).append(" { ");
                field(sb, u.field());
                sb.append(" }");
        }
    }

    private void dnat(StringBuilder sb, Statement.Dnat d) {
        if (d.direct()) {
            sb.append("dnat to ").append(d.targets().get(0).ip().withPort(d.targets().get(0).port()));
        } else {
            sb.append("dnat ").append(family.nftFamily()).append(" addr . port to ");
            numgenMap(sb, "map", d.targets(), t -> sb.append(t.ip()).append(" . ").append(t.port()));
        }
    }

    /** {@code numgen random mod N vmap { 0 : a , 1 : b }} (or {@code map}): each value for one draw. */
    private static <T> void numgenMap(StringBuilder sb, String kind, List<T> values, Consumer<T> write) {
        sb.append("numgen random mod ").append(values.size()).append(' ').append(kind).append(" { ");
        for (int i = 0; i < values.size(); i++) {
            sb.append(i == 0 ? "" : " , ").append(i).append(" : ");
            write.accept(values.get(i));
        }
        sb.append(" }");
    }

    private static void verdict(StringBuilder sb, Verdict v) {
        if (v.target() != null) name(v.target());
        sb.append(v.text());
    }

    /** Fields as nft spells them in this family, joined by {@code " . "}: {@code ip daddr . tcp dport}. */
    public String fieldsText(List<Field> fs) {
        StringBuilder sb = new StringBuilder();
        fields(sb, fs);
        return sb.toString();
    }

    private void fields(StringBuilder sb, List<Field> fs) {
        join(sb, fs, " . ", f -> field(sb, f));
    }

    /** Writes each item with {@code write}, {@code sep} between two. */
    private static <T> void join(StringBuilder sb, List<T> items, String sep, Consumer<T> write) {
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) sb.append(sep);
            write.accept(items.get(i));
        }
    }

    private void field(StringBuilder sb, Field f) {
        switch (f) {
            case SADDR -> sb.append(family.nftFamily()).append(" saddr");
            case DADDR -> sb.append(family.nftFamily()).append(" daddr");
            case L4PROTO -> sb.append("meta l4proto");
            case DPORT -> sb.append("th dport");
            case TCP_DPORT -> sb.append("tcp dport");
            case UDP_DPORT -> sb.append("udp dport");
            case SCTP_DPORT -> sb.append("sctp dport");
        }
    }

    public static String hex(int v) { return "0x" + Integer.toHexString(v); }
}
