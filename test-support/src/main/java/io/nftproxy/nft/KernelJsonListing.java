package io.nftproxy.nft;

import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.readback.Json;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link TableContent} as {@code nft -j list table <family> kube-proxy} prints it (JSON schema 1, nft 1.0.6's
 * forms), so the in-memory kernel can be listed like the real one; {@code readback.KernelTableParser} defines what
 * is read and reads this back into the same table. Where the kernel rewrites what it was given, this writes the
 * kernel's form: a {@code dynamic,timeout} set's flags as {@code timeout} alone, {@code ct state new} with the
 * {@code in} operator, numgen with its zero offset. Chain comments are printed, as later nft versions do.
 */
public final class KernelJsonListing {
    private final IpFamily family;
    private long handle;

    private KernelJsonListing(IpFamily family) { this.family = family; }

    /** The listing of {@code table}. */
    public static String of(TableContent table) {
        return Json.write(new KernelJsonListing(table.family()).document(table));
    }

    private Map<String, Object> document(TableContent t) {
        List<Object> out = new ArrayList<>();
        out.add(Map.of("metainfo", obj("version", "1.0.6", "release_name", "Lester Gooch #5", "json_schema_version", 1L)));
        out.add(Map.of("table", obj("family", family.nftFamily(), "name", TableContent.TABLE_NAME, "handle", ++handle)));
        for (Chain c : t.chains().values()) out.add(Map.of("chain", chain(c)));
        for (NftSet s : t.sets().values()) out.add(Map.of(s.isMap() ? "map" : "set", set(s, t)));
        for (Chain c : t.chains().values()) {
            for (Rule r : t.rules(c.name())) out.add(Map.of("rule", rule(r)));
        }
        return Map.of("nftables", out);
    }

    private Map<String, Object> owned(String name) {
        return obj("family", family.nftFamily(), "table", TableContent.TABLE_NAME, "name", name, "handle", ++handle);
    }

    private Map<String, Object> chain(Chain c) {
        Map<String, Object> m = owned(c.name());
        if (c.isBase()) {
            m.put("type", c.hook().type());
            m.put("hook", c.hook().hook());
            m.put("prio", (long) c.hook().priority());
            m.put("policy", "accept");
        }
        if (c.comment() != null) m.put("comment", c.comment());
        return m;
    }

    private Map<String, Object> set(NftSet s, TableContent t) {
        Map<String, Object> m = owned(s.name());
        m.put("type", s.keyType().size() == 1 ? s.keyType().get(0) : s.keyType());
        if (s.isMap()) m.put("map", s.valueType());
        List<String> flags = new ArrayList<>(s.flags());
        if (flags.contains("timeout")) flags.remove("dynamic");
        if (!flags.isEmpty()) m.put("flags", flags);
        if (s.timeoutSeconds() > 0) m.put("timeout", (long) s.timeoutSeconds());
        if (s.comment() != null) m.put("comment", s.comment());
        List<Object> elems = new ArrayList<>();
        for (Element e : t.elements(s.name()).values()) elems.add(element(s, e));
        if (!elems.isEmpty()) m.put("elem", elems);
        return m;
    }

    private Object element(NftSet s, Element e) {
        Object key = e.key().size() == 1 ? value(e.key().get(0)) : Map.of("concat", e.key().stream().map(this::value).toList());
        if (e.comment() != null) key = Map.of("elem", obj("val", key, "comment", e.comment()));
        if (!s.isMap()) return key;
        return List.of(key, e.value() != null ? verdict(e.value()) : target(e.data()));
    }

    private Object value(Value v) {
        if (v instanceof Value.Addr a) return a.ip().toString();
        if (v instanceof Value.Proto p) return p.protocol().nftName();
        if (v instanceof Value.Port p) return (long) p.port();
        return (long) ((Value.Index) v).index();
    }

    private Map<String, Object> rule(Rule r) {
        Map<String, Object> m = obj("family", family.nftFamily(), "table", TableContent.TABLE_NAME, "chain", r.chain(),
                "handle", ++handle);
        List<Object> expr = new ArrayList<>();
        for (Match x : r.matches()) expr.add(Map.of("match", match(x)));
        for (Statement s : r.statements()) expr.add(statement(s));
        m.put("expr", expr);
        if (r.comment() != null) m.put("comment", r.comment());
        return m;
    }

    private Map<String, Object> match(Match x) {
        if (x instanceof Match.CtStateNew) return cmp("in", Map.of("ct", Map.of("key", "state")), "new");
        if (x instanceof Match.CtStatusDnat) return cmp("in", Map.of("ct", Map.of("key", "status")), "dnat");
        if (x instanceof Match.SetLookup l) return cmp(l.negated() ? "!=" : "==", fields(l.fields()), "@" + l.set());
        if (x instanceof Match.AddrIn a) {
            List<Object> prefixes = a.prefixes().stream().map(this::prefix).toList();
            return cmp(a.negated() ? "!=" : "==", field(a.field()), prefixes.size() == 1 ? prefixes.get(0) : Map.of("set", prefixes));
        }
        if (x instanceof Match.ProtoIs p) return cmp("==", field(Field.L4PROTO), p.protocol().nftName());
        if (x instanceof Match.IifName i) return cmp(i.negated() ? "!=" : "==", meta("iifname"), i.name());
        if (x instanceof Match.FibLocal f) {
            return cmp("==", Map.of("fib", obj("result", "type", "flags", List.of(f.field() == Field.SADDR ? "saddr" : "daddr"))), "local");
        }
        if (x instanceof Match.MarkBits b) return cmp("!=", Map.of("&", List.of(meta("mark"), Integer.toUnsignedLong(b.mask()))), 0L);
        Match.NumgenIs n = (Match.NumgenIs) x;
        return cmp("==", numgen(n.modulus()), (long) n.value());
    }

    private Object prefix(IpPrefix p) {
        return p.isHost() ? p.address().toString() : Map.of("prefix", obj("addr", p.address().toString(), "len", (long) p.length()));
    }

    private Map<String, Object> statement(Statement s) {
        if (s instanceof Statement.Decide d) return verdict(d.verdict());
        if (s instanceof Statement.Reject) {
            return Map.of("reject", obj("type", family == IpFamily.IPV4 ? "icmp" : "icmpv6", "expr", "port-unreachable"));
        }
        if (s instanceof Statement.VmapLookup v) return Map.of("vmap", obj("key", fields(v.fields()), "data", "@" + v.map()));
        if (s instanceof Statement.NumgenVmap v) {
            return Map.of("vmap", obj("key", numgen(v.targets().size()), "data", Map.of("set", indexed(v.targets().stream().map(this::verdict).toList()))));
        }
        if (s instanceof Statement.MarkOr o) return mangleMark("|", o.mark());
        if (s instanceof Statement.MarkXor o) return mangleMark("^", o.mark());
        if (s instanceof Statement.Masquerade) return Map.of("masquerade", Map.of("flags", List.of("fully-random")));
        if (s instanceof Statement.Dnat d) {
            if (d.direct()) {
                Statement.Target t = d.targets().get(0);
                return Map.of("dnat", obj("family", family.nftFamily(), "addr", t.ip().toString(), "port", (long) t.port()));
            }
            Object map = obj("key", numgen(d.targets().size()), "data", Map.of("set", indexed(d.targets().stream().map(this::target).toList())));
            return Map.of("dnat", obj("family", family.nftFamily(), "addr", Map.of("map", map)));
        }
        if (s instanceof Statement.DnatMap d) {
            List<Object> key = new ArrayList<>(d.key().stream().map(this::field).toList());
            key.add(numgen(d.numgenModulus()));
            return Map.of("dnat", obj("family", family.nftFamily(), "addr", Map.of("map", obj("key", Map.of("concat", key), "data", "@" + d.map()))));
        }
        Statement.UpdateSet u = (Statement.UpdateSet) s;
        return Map.of("set", obj("op", "update", "elem", field(u.field()), "set", "@" + u.set()));
    }

    private Map<String, Object> mangleMark(String op, int mark) {
        return Map.of("mangle", obj("key", meta("mark"), "value", Map.of(op, List.of(meta("mark"), Integer.toUnsignedLong(mark)))));
    }

    private Map<String, Object> verdict(Verdict v) {
        if (v.target() != null) return Map.of(v instanceof Verdict.Jump ? "jump" : "goto", Map.of("target", v.target()));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(v.text(), null);
        return m;
    }

    private Object target(Statement.Target t) {
        return Map.of("concat", List.of(t.ip().toString(), (long) t.port()));
    }

    private Object fields(List<Field> fs) {
        return fs.size() == 1 ? field(fs.get(0)) : Map.of("concat", fs.stream().map(this::field).toList());
    }

    private Object field(Field f) {
        return switch (f) {
            case L4PROTO -> meta("l4proto");
            case DPORT -> payload("th", "dport");
            case TCP_DPORT, UDP_DPORT, SCTP_DPORT -> payload(f.impliedProtocol().nftName(), "dport");
            case SADDR -> payload(family.nftFamily(), "saddr");
            case DADDR -> payload(family.nftFamily(), "daddr");
        };
    }

    private static Map<String, Object> payload(String protocol, String field) {
        return Map.of("payload", obj("protocol", protocol, "field", field));
    }

    private static Map<String, Object> meta(String key) { return Map.of("meta", Map.of("key", key)); }

    private static Map<String, Object> numgen(int mod) {
        return Map.of("numgen", obj("mode", "random", "mod", (long) mod, "offset", 0L));
    }

    /** {@code [[0, v0], [1, v1], ...]}: a numgen's anonymous map. */
    private static List<Object> indexed(List<?> values) {
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) out.add(List.of((long) i, values.get(i)));
        return out;
    }

    private static Map<String, Object> cmp(String op, Object left, Object right) {
        return obj("op", op, "left", left, "right", right);
    }

    /** An object whose keys keep the order given, as nft prints them. */
    private static Map<String, Object> obj(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }
}
