package io.nftproxy.readback;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.Field;
import io.nftproxy.nft.Match;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.Rule;
import io.nftproxy.nft.Statement;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.UnrecognisedRuleException;
import io.nftproxy.nft.Value;
import io.nftproxy.nft.Verdict;

import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the kernel's {@code kube-proxy} table back into the model: the document {@code nft -j list table <family>
 * kube-proxy} prints (JSON schema 1, as written by nft 1.0.6) becomes a {@link TableContent} made of exactly the
 * records the renderer produces, so the two can be compared with {@link TableComparison}. Used to verify kernel
 * state against the model and to adopt a table left by a previous run.
 *
 * <p>Strict: every key of every object we read must be one we know, and every expression must be one the renderer
 * writes. Anything else is collected (all of it, not only the first) and reported by
 * {@link UnrecognisedRuleException}, so a rule someone else added is never silently dropped. A document that is
 * not an nft listing of one {@code kube-proxy} table at all is an {@link IllegalArgumentException}.
 *
 * <p>What is deliberately not read back:
 * <ul>
 *   <li>handles, and the {@code size} nft adds to dynamic sets (65535 unless given);</li>
 *   <li>the table comment and chain comments, which nft 1.0.6 does not print in JSON (they are read if a later nft
 *       prints them);</li>
 *   <li>elements carrying {@code expires} in a timeout set: packet-path state written by {@code update @set}
 *       (ClientIP affinity), never part of the desired table.</li>
 * </ul>
 * Forms the kernel changes, mapped back here: nft 1.0.6 prints {@code flags dynamic,timeout} as
 * {@code ["timeout"]} (and a timeout-only or dynamic-only set with no flags at all), so {@code timeout} alone is
 * read as {@code dynamic,timeout}; {@code mark and M != 0} comes back as {@code != } on {@code &}; an anonymous
 * address set comes back sorted and merged, and ranges are split into prefixes (see {@link AddressIntervals}).
 */
public final class KernelTableParser {
    private static final Set<String> TABLE_KEYS = Set.of("family", "name", "handle", "comment");
    private static final Set<String> SET_KEYS = Set.of("family", "name", "table", "type", "handle", "comment", "elem",
            "flags", "timeout", "size", "map");
    private static final Set<String> CHAIN_KEYS = Set.of("family", "table", "name", "handle", "type", "hook", "prio",
            "policy", "comment");
    private static final Set<String> RULE_KEYS = Set.of("family", "table", "chain", "handle", "expr", "comment");

    private final List<UnrecognisedRuleException.Item> unrecognised = new ArrayList<>();
    private IpFamily family;
    private TableContent.Builder builder;
    private final Map<String, NftSet> sets = new LinkedHashMap<>();
    /** Data maps and their elements, added to the table once the rules say how each was declared. */
    private final Map<String, List<Element>> dataMaps = new LinkedHashMap<>();
    /** How each data map is used: the {@code dnat … map @m} statements read so far, by map. */
    private final Map<String, Statement.DnatMap> dnatMaps = new LinkedHashMap<>();

    private KernelTableParser() {}

    /**
     * Parses one {@code nft -j list table} document.
     *
     * @throws UnrecognisedRuleException the table holds something the renderer never writes
     * @throws IllegalArgumentException  the text is not JSON, or not a listing of one {@code kube-proxy} table
     */
    public static TableContent parse(String json) throws UnrecognisedRuleException {
        Object doc = Json.parse(json);
        try {
            return new KernelTableParser().run(doc);
        } catch (NotOurs e) {
            // Only the document's outer structure can get here: everything inside an object is caught and recorded.
            throw new IllegalArgumentException("not an nft JSON listing: " + e.getMessage(), e);
        }
    }

    /** Thrown inside; caught at the level of one object and recorded as an unrecognised item. */
    private static final class NotOurs extends RuntimeException {
        NotOurs(String message) { super(message, null, false, false); }
    }

    private TableContent run(Object doc) throws UnrecognisedRuleException {
        Map<String, Object> top = map(doc, "document");
        if (!top.containsKey("nftables")) throw new IllegalArgumentException("not an nft JSON listing: no \"nftables\" array");
        List<Object> objects = list(top.get("nftables"), "nftables");
        for (Object o : objects) {
            Map<String, Object> wrapper = map(o, "nftables entry");
            if (wrapper.size() != 1) throw new IllegalArgumentException("nftables entry with " + wrapper.size() + " keys: " + Json.write(o));
            String kind = wrapper.keySet().iterator().next();
            Map<String, Object> body = map(wrapper.get(kind), kind);
            if (kind.equals("metainfo")) {
                Object v = body.get("json_schema_version");
                if (v != null && !Long.valueOf(1).equals(v)) throw new IllegalArgumentException("unsupported nft JSON schema " + v);
                continue;
            }
            if (kind.equals("table")) {
                table(body);
                continue;
            }
            if (builder == null) throw new IllegalArgumentException(kind + " before the table in the listing");
            checkOwner(kind, body);
            switch (kind) {
                case "set", "map" -> guarded(kind + " " + body.get("name"), body, () -> set(kind, body));
                case "chain" -> guarded("chain " + body.get("name"), body, () -> chain(body));
                case "rule" -> rule(body);
                default -> unrecognised.add(new UnrecognisedRuleException.Item(kind + " " + body.get("name"),
                        "object kind nftproxy never creates", Json.write(o)));
            }
        }
        if (builder == null) throw new IllegalArgumentException("no table in the listing");
        addDataMaps();
        TableContent table;
        try {
            table = builder.build();
        } catch (IllegalStateException e) {
            if (unrecognised.isEmpty()) throw new IllegalArgumentException("inconsistent listing: " + e.getMessage(), e);
            table = null;
        }
        if (!unrecognised.isEmpty()) throw new UnrecognisedRuleException(table, unrecognised);
        return table;
    }

    private void table(Map<String, Object> t) {
        if (builder != null) throw new IllegalArgumentException("more than one table in the listing");
        if (!TableContent.TABLE_NAME.equals(t.get("name"))) throw new IllegalArgumentException("table " + t.get("name") + " is not " + TableContent.TABLE_NAME);
        family = familyOf(t.get("family"));
        builder = TableContent.builder(family);
        Set<String> extra = extraKeys(t, TABLE_KEYS);
        if (!extra.isEmpty()) unrecognised.add(new UnrecognisedRuleException.Item("table", "unknown properties " + extra, Json.write(t)));
    }

    private static IpFamily familyOf(Object f) {
        for (IpFamily fam : IpFamily.values()) if (fam.nftFamily().equals(f)) return fam;
        throw new IllegalArgumentException("table family " + f + " is neither ip nor ip6");
    }

    private void checkOwner(String kind, Map<String, Object> body) {
        if (!family.nftFamily().equals(body.get("family")) || !TableContent.TABLE_NAME.equals(body.get("table"))) {
            throw new IllegalArgumentException(kind + " of another table: " + Json.write(body));
        }
    }

    private void guarded(String where, Object body, Runnable r) {
        try {
            r.run();
        } catch (NotOurs | InvalidInputException e) {
            unrecognised.add(new UnrecognisedRuleException.Item(where, e.getMessage(), Json.write(body)));
        }
    }

    private void set(String kind, Map<String, Object> s) {
        // Unknown properties are reported after the set is added, so rules using it are not reported as well.
        Set<String> extra = extraKeys(s, SET_KEYS);
        String name = string(s.get("name"));
        List<String> keyType = strings(s.get("type"));
        String valueType = null;
        boolean dataMap = false;
        if (kind.equals("map")) {
            valueType = string(s.get("map"));
            dataMap = valueType.equals(family.addrType() + " . inet_service");
            if (!valueType.equals("verdict") && !dataMap) {
                throw new NotOurs("map of " + valueType + " (ours are verdict maps and address . port maps)");
            }
        } else if (s.containsKey("map")) {
            throw new NotOurs("set with a map type");
        }
        for (int i = 0; i < keyType.size(); i++) {
            String t = keyType.get(i);
            // A numgen slot has no named type: the kernel reports it as integer, the last part of a data map's key.
            boolean slot = dataMap && i == keyType.size() - 1 && t.equals("integer");
            if (!t.equals(family.addrType()) && !t.equals("inet_proto") && !t.equals("inet_service") && !slot) {
                throw new NotOurs("key type " + t);
            }
        }
        if (dataMap && !keyType.get(keyType.size() - 1).equals("integer")) throw new NotOurs("data map without a numgen slot");
        List<String> flags = new ArrayList<>(s.containsKey("flags") ? strings(s.get("flags")) : List.of());
        // nft 1.0.6 prints "flags dynamic,timeout" as ["timeout"] and never prints "dynamic" (see class comment).
        if (flags.contains("timeout") && !flags.contains("dynamic")) flags.add(flags.indexOf("timeout"), "dynamic");
        int timeout = s.containsKey("timeout") ? intIn(s.get("timeout"), 1, Integer.MAX_VALUE, "timeout") : 0;
        NftSet set = new NftSet(name, keyType, valueType, flags, timeout, optString(s.get("comment")));
        sets.put(name, set);
        if (dataMap) {
            if (!flags.isEmpty() || timeout != 0) throw new NotOurs("data map with flags or a timeout");
            dataMaps.put(name, new ArrayList<>());
        } else {
            builder.set(set);
        }
        if (s.containsKey("elem")) elements(kind, set, s.get("elem"));
        if (!extra.isEmpty()) throw new NotOurs("unknown properties " + extra);
    }

    private void elements(String kind, NftSet set, Object elem) {
        String name = set.name();
        for (Object e : list(elem, "elem")) {
            guarded(kind + " " + name + " element", e, () -> {
                Element el = element(set, e);
                if (el == null) return;
                if (dataMaps.containsKey(name)) dataMaps.get(name).add(el);
                else builder.element(el);
            });
        }
    }

    /** One element; null for a packet-path entry of a timeout set (see class comment). */
    private Element element(NftSet set, Object e) {
        Object keyExpr = e;
        Verdict value = null;
        Statement.Target data = null;
        if (set.isMap()) {
            List<Object> pair = list(e, "map element");
            if (pair.size() != 2) throw new NotOurs("map element is not [key, value]");
            keyExpr = pair.get(0);
            if (set.valueType().equals("verdict")) value = verdict(pair.get(1));
            else data = target(pair.get(1));
        }
        String comment = null;
        if (keyExpr instanceof Map<?, ?> m && m.containsKey("elem")) {
            Map<String, Object> wrapped = map(m.get("elem"), "elem");
            if (wrapped.containsKey("expires") && set.timeoutSeconds() > 0 && !set.isMap()) return null;
            keys(wrapped, Set.of("val", "comment"));
            comment = optString(wrapped.get("comment"));
            keyExpr = wrapped.get("val");
        }
        List<Object> parts = itemsOr(keyExpr, "concat");
        if (parts.size() != set.keyType().size()) throw new NotOurs("key has " + parts.size() + " parts, type has " + set.keyType().size());
        List<Value> key = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) key.add(value(set.keyType().get(i), parts.get(i)));
        return new Element(set.name(), key, value, comment, data);
    }

    /**
     * The data maps, each declared as the {@code dnat} rule that reads it says: nft's listing loses the
     * {@code typeof} (a {@code tcp dport} key comes back as {@code inet_service}, the numgen slot as
     * {@code integer}), so the declaration is rebuilt from its one user. A map no rule reads keeps no declaration
     * and so differs from the one we write, as its missing rule does.
     */
    private void addDataMaps() {
        for (Map.Entry<String, List<Element>> m : dataMaps.entrySet()) {
            NftSet read = sets.get(m.getKey());
            Statement.DnatMap user = dnatMaps.get(m.getKey());
            NftSet set = read;
            if (user != null) {
                Field port = user.key().get(user.key().size() - 1);
                NftSet declared = NftSet.typeofMap(read.name(),
                        new NftSet.Typeof(user.key(), user.numgenModulus(), List.of(Field.DADDR, port)), family.addrType(), read.comment());
                if (declared.keyType().equals(read.keyType()) && declared.valueType().equals(read.valueType())) set = declared;
            }
            builder.set(set);
            for (Element e : m.getValue()) builder.element(e);
        }
    }

    private Value value(String type, Object v) {
        switch (type) {
            case "inet_proto": return new Value.Proto(protocol(v));
            case "inet_service": return new Value.Port(intIn(v, 1, 65535, "port"));
            case "integer": return new Value.Index(intIn(v, 0, Integer.MAX_VALUE, "numgen slot"));
            default:
                if (!(v instanceof String s)) throw new NotOurs("address element " + Json.write(v) + " (intervals are not ours)");
                return new Value.Addr(IpAddress.parse(s, family));
        }
    }

    private void chain(Map<String, Object> c) {
        keys(c, CHAIN_KEYS);
        String name = string(c.get("name"));
        Chain.Hook hook = null;
        if (c.containsKey("hook") || c.containsKey("type") || c.containsKey("prio")) {
            hook = new Chain.Hook(string(c.get("type")), string(c.get("hook")),
                    intIn(c.get("prio"), Integer.MIN_VALUE, Integer.MAX_VALUE, "priority"));
        } else if (c.containsKey("policy")) {
            throw new NotOurs("policy on a regular chain");
        }
        builder.chain(new Chain(name, hook, optString(c.get("comment"))));
        // Reported after the chain is added, so its rules are not reported as well.
        Object policy = c.get("policy");
        if (policy != null && !"accept".equals(policy)) throw new NotOurs("base chain policy " + policy + " (ours are accept)");
    }

    private int ruleIndex;
    private String ruleChain;

    private void rule(Map<String, Object> r) {
        String chain = String.valueOf(r.get("chain"));
        if (!chain.equals(ruleChain)) {
            ruleChain = chain;
            ruleIndex = 0;
        }
        String where = "chain " + chain + " rule " + (ruleIndex++) + " (handle " + r.get("handle") + ")";
        if (!builder.hasChain(chain)) {
            unrecognised.add(new UnrecognisedRuleException.Item(where, "rule of a chain not understood", Json.write(r)));
            return;
        }
        guarded(where, r, () -> {
            keys(r, RULE_KEYS);
            List<Match> matches = new ArrayList<>();
            List<Statement> statements = new ArrayList<>();
            for (Object x : list(r.get("expr"), "expr")) {
                Map<String, Object> e = map(x, "expression");
                if (e.size() != 1) throw new NotOurs("expression with " + e.size() + " keys");
                if (e.containsKey("match")) {
                    if (!statements.isEmpty()) throw new NotOurs("match after a statement");
                    matches.add(match(object(e.get("match"), "match", "op", "left", "right")));
                } else {
                    statements.add(statement(e));
                }
            }
            if (statements.isEmpty()) throw new NotOurs("rule without a statement");
            Rule rule = new Rule(chain, matches, statements, optString(r.get("comment")));
            for (String s : rule.setRefs()) if (!sets.containsKey(s)) throw new NotOurs("uses set " + s + " that is not ours");
            builder.rule(rule);
        });
    }

    private Match match(Map<String, Object> m) {
        String op = string(m.get("op"));
        Object left = m.get("left");
        Object right = m.get("right");
        Map<String, Object> l = left instanceof Map<?, ?> ? map(left, "left") : Map.of();
        if (l.containsKey("ct")) {
            Map<String, Object> ct = map(l.get("ct"), "ct");
            String key = string(ct.get("key"));
            if (ct.size() != 1) throw new NotOurs("ct expression with direction or family");
            if (!op.equals("in") && !op.equals("==")) throw new NotOurs("ct " + key + " " + op);
            Object v = right instanceof List<?> rl && rl.size() == 1 ? rl.get(0) : right;
            if (key.equals("state") && "new".equals(v)) return new Match.CtStateNew();
            if (key.equals("status") && "dnat".equals(v)) return new Match.CtStatusDnat();
            throw new NotOurs("ct " + key + " " + Json.write(right));
        }
        if (l.containsKey("fib")) {
            Map<String, Object> fib = object(l.get("fib"), "fib", "result", "flags");
            List<String> flags = strings(fib.get("flags"));
            if (!op.equals("==") || !"type".equals(fib.get("result")) || !"local".equals(right) || flags.size() != 1) {
                throw new NotOurs("fib form");
            }
            if (flags.get(0).equals("saddr")) return new Match.FibLocal(Field.SADDR);
            if (flags.get(0).equals("daddr")) return new Match.FibLocal(Field.DADDR);
            throw new NotOurs("fib " + flags);
        }
        if (l.containsKey("&")) {
            List<Object> and = list(l.get("&"), "&");
            if (and.size() != 2 || !isMeta(and.get(0), "mark") || !op.equals("!=") || !Long.valueOf(0).equals(right)) {
                throw new NotOurs("bitwise match form");
            }
            return new Match.MarkBits(mark(and.get(1)));
        }
        if (l.containsKey("numgen")) {
            int mod = numgenMod(left);
            if (!op.equals("==")) throw new NotOurs("numgen " + op);
            return new Match.NumgenIs(mod, intIn(right, 0, mod - 1, "numgen value"));
        }
        if (isMeta(left, "iifname")) {
            if (!(right instanceof String name) || !(op.equals("==") || op.equals("!="))) throw new NotOurs("iifname form");
            return new Match.IifName(name, op.equals("!="));
        }
        if (l.containsKey("meta") && !isMeta(left, "l4proto")) throw new NotOurs("meta match");
        if (!op.equals("==") && !op.equals("!=")) throw new NotOurs("operator " + op);
        boolean negated = op.equals("!=");
        List<Field> fields = fields(left);
        if (right instanceof String s && s.startsWith("@")) return new Match.SetLookup(fields, s.substring(1), negated);
        if (fields.size() == 1 && fields.get(0) == Field.L4PROTO) {
            if (negated) throw new NotOurs("negated protocol match");
            return new Match.ProtoIs(protocol(right));
        }
        if (fields.size() == 1 && (fields.get(0) == Field.SADDR || fields.get(0) == Field.DADDR)) {
            return new Match.AddrIn(fields.get(0), negated, prefixes(right));
        }
        throw new NotOurs("match form");
    }

    private List<IpPrefix> prefixes(Object right) {
        List<IpPrefix> out = new ArrayList<>();
        for (Object i : itemsOr(right, "set")) {
            if (i instanceof String s) {
                out.add(IpPrefix.host(IpAddress.parse(s, family)));
                continue;
            }
            Map<String, Object> m = map(i, "address");
            if (m.containsKey("prefix")) {
                Map<String, Object> p = object(m.get("prefix"), "prefix", "addr", "len");
                out.add(new IpPrefix(IpAddress.parse(string(p.get("addr")), family), intIn(p.get("len"), 0, family.bits(), "prefix length")));
            } else if (m.containsKey("range")) {
                List<Object> r = list(m.get("range"), "range");
                if (r.size() != 2) throw new NotOurs("range of " + r.size());
                out.addAll(AddressIntervals.range(IpAddress.parse(string(r.get(0)), family), IpAddress.parse(string(r.get(1)), family)));
            } else {
                throw new NotOurs("address form");
            }
        }
        return out;
    }

    private Statement statement(Map<String, Object> e) {
        String kind = e.keySet().iterator().next();
        Object body = e.get(kind);
        switch (kind) {
            case "jump": case "goto": case "drop": case "accept": case "return":
                return new Statement.Decide(verdict(e));
            case "reject": {
                if (body == null) return new Statement.Reject();
                Map<String, Object> r = object(body, "reject", "type", "expr");
                String icmp = family == IpFamily.IPV4 ? "icmp" : "icmpv6";
                if (!icmp.equals(r.get("type")) || !"port-unreachable".equals(r.get("expr"))) throw new NotOurs("reject form");
                return new Statement.Reject();
            }
            case "vmap": {
                Map<String, Object> v = object(body, "vmap", "key", "data");
                Object key = v.get("key");
                if (key instanceof Map<?, ?> k && k.containsKey("numgen")) {
                    int mod = numgenMod(key);
                    List<Object> data = list(map(v.get("data"), "vmap data").get("set"), "vmap set");
                    return new Statement.NumgenVmap(indexed(data, mod).stream().map(KernelTableParser::verdict).toList());
                }
                Object data = v.get("data");
                if (!(data instanceof String s) || !s.startsWith("@")) throw new NotOurs("vmap with an anonymous map");
                return new Statement.VmapLookup(fields(key), s.substring(1));
            }
            case "mangle": {
                Map<String, Object> m = object(body, "mangle", "key", "value");
                if (!isMeta(m.get("key"), "mark")) throw new NotOurs("mangle of something other than the mark");
                Map<String, Object> val = map(m.get("value"), "mangle value");
                if (val.size() != 1) throw new NotOurs("mangle value form");
                String op = val.keySet().iterator().next();
                List<Object> operands = list(val.get(op), "operands");
                if (operands.size() != 2 || !isMeta(operands.get(0), "mark")) throw new NotOurs("mangle value form");
                if (op.equals("|")) return new Statement.MarkOr(mark(operands.get(1)));
                if (op.equals("^")) return new Statement.MarkXor(mark(operands.get(1)));
                throw new NotOurs("mark operator " + op);
            }
            case "masquerade": {
                Map<String, Object> m = object(body, "masquerade", "flags");
                Object flags = m.get("flags");
                List<String> fl = flags == null ? List.of() : strings(flags);
                if (!fl.equals(List.of("fully-random"))) throw new NotOurs("masquerade without fully-random alone");
                return new Statement.Masquerade();
            }
            case "dnat":
                return dnat(map(body, "dnat"));
            case "set": {
                Map<String, Object> s = object(body, "set", "op", "elem", "set");
                String set = string(s.get("set"));
                if (!"update".equals(s.get("op")) || !set.startsWith("@")) throw new NotOurs("set statement form");
                List<Field> f = fields(s.get("elem"));
                if (f.size() != 1) throw new NotOurs("update with a concatenation");
                return new Statement.UpdateSet(set.substring(1), f.get(0));
            }
            default:
                throw new NotOurs("statement " + kind);
        }
    }

    private Statement dnat(Map<String, Object> d) {
        Object fam = d.get("family");
        if (fam != null && !family.nftFamily().equals(fam)) throw new NotOurs("dnat family " + fam);
        Object addr = d.get("addr");
        if (addr instanceof String ip) {
            keys(d, Set.of("family", "addr", "port"));
            int port = intIn(d.get("port"), 1, 65535, "dnat port");
            return new Statement.Dnat(List.of(new Statement.Target(IpAddress.parse(ip, family), port)), true);
        }
        keys(d, Set.of("family", "addr"));
        Map<String, Object> m = object(map(addr, "dnat addr").get("map"), "dnat map", "key", "data");
        if (m.get("data") instanceof String named) return dnatThroughMap(m.get("key"), named);
        int mod = numgenMod(m.get("key"));
        List<Object> data = list(map(m.get("data"), "dnat data").get("set"), "dnat set");
        return new Statement.Dnat(indexed(data, mod).stream().map(this::target).toList(), false);
    }

    /** {@code addr . port}, a DNAT target or a data map's value. */
    private Statement.Target target(Object t) {
        List<Object> c = list(map(t, "address . port").get("concat"), "address . port");
        if (c.size() != 2) throw new NotOurs("not address . port");
        return new Statement.Target(IpAddress.parse(string(c.get(0)), family), intIn(c.get(1), 1, 65535, "port"));
    }

    /**
     * {@code dnat to KEY . numgen random mod N map @m} (nft prints no {@code addr . port}: the map's data type says
     * it). The key must be what the flat layout writes: fields ending in a protocol-bound port.
     */
    private Statement dnatThroughMap(Object key, String named) {
        if (!named.startsWith("@")) throw new NotOurs("dnat map " + named);
        List<Object> parts = list(map(key, "dnat map key").get("concat"), "dnat map key");
        if (parts.size() < 2) throw new NotOurs("dnat map key without a numgen slot");
        List<Field> fields = parts.subList(0, parts.size() - 1).stream().map(this::field).toList();
        if (fields.get(fields.size() - 1).impliedProtocol() == null) throw new NotOurs("dnat map key not ending in a protocol's port");
        Statement.DnatMap d = new Statement.DnatMap(fields, numgenMod(parts.get(parts.size() - 1)), named.substring(1));
        if (!dataMaps.containsKey(d.map())) throw new NotOurs("dnat through " + d.map() + ", not one of our data maps");
        Statement.DnatMap other = dnatMaps.putIfAbsent(d.map(), d);
        if (other != null && !other.equals(d)) throw new NotOurs("data map " + d.map() + " read with two keys");
        return d;
    }

    /** {@code numgen random mod N} (offset 0), returning N. */
    private static int numgenMod(Object key) {
        Map<String, Object> n = object(map(key, "numgen").get("numgen"), "numgen", "mode", "mod", "offset");
        if (!"random".equals(n.get("mode")) || (n.containsKey("offset") && !Long.valueOf(0).equals(n.get("offset")))) {
            throw new NotOurs("numgen form");
        }
        return intIn(n.get("mod"), 1, Integer.MAX_VALUE, "numgen mod");
    }

    /** The values of {@code [[0, v0], [1, v1], ...]}, requiring exactly the indices 0..mod-1, in index order. */
    private static List<Object> indexed(List<Object> pairs, int mod) {
        Object[] out = new Object[mod];
        for (Object p : pairs) {
            List<Object> pair = list(p, "indexed entry");
            if (pair.size() != 2) throw new NotOurs("entry is not [index, value]");
            int i = intIn(pair.get(0), 0, mod - 1, "numgen index");
            if (out[i] != null) throw new NotOurs("numgen index " + i + " twice");
            out[i] = pair.get(1);
        }
        for (int i = 0; i < mod; i++) if (out[i] == null) throw new NotOurs("numgen index " + i + " has no target");
        return List.of(out);
    }

    private static Verdict verdict(Object v) {
        Map<String, Object> m = map(v, "verdict");
        if (m.size() != 1) throw new NotOurs("verdict form");
        String k = m.keySet().iterator().next();
        if (k.equals("jump") || k.equals("goto")) {
            String target = string(object(m.get(k), k, "target").get("target"));
            return k.equals("jump") ? new Verdict.Jump(target) : new Verdict.Goto(target);
        }
        Verdict plain = switch (k) {
            case "drop" -> new Verdict.Drop();
            case "accept" -> new Verdict.Accept();
            case "return" -> new Verdict.Return();
            case "continue" -> new Verdict.Continue();
            default -> throw new NotOurs("verdict " + k);
        };
        if (m.get(k) != null) throw new NotOurs("verdict with an argument");
        return plain;
    }

    private List<Field> fields(Object expr) {
        return itemsOr(expr, "concat").stream().map(this::field).toList();
    }

    private Field field(Object expr) {
        if (isMeta(expr, "l4proto")) return Field.L4PROTO;
        Map<String, Object> m = map(expr, "field");
        if (m.containsKey("payload")) {
            Map<String, Object> p = object(m.get("payload"), "payload", "protocol", "field");
            Object proto = p.get("protocol"), f = p.get("field");
            if ("th".equals(proto) && "dport".equals(f)) return Field.DPORT;
            for (Protocol pr : Protocol.values()) if ("dport".equals(f) && pr.nftName().equals(proto)) return Field.dport(pr);
            if (family.nftFamily().equals(proto) && "saddr".equals(f)) return Field.SADDR;
            if (family.nftFamily().equals(proto) && "daddr".equals(f)) return Field.DADDR;
        }
        throw new NotOurs("field " + Json.write(expr));
    }

    private static boolean isMeta(Object expr, String key) {
        return expr instanceof Map<?, ?> m && m.size() == 1 && m.get("meta") instanceof Map<?, ?> meta
                && meta.size() == 1 && key.equals(meta.get("key"));
    }

    private static int mark(Object v) {
        long l = v instanceof Long x ? x : -1;
        if (l < 0 || l > 0xffffffffL) throw new NotOurs("mark " + Json.write(v));
        return (int) l;
    }

    private static Protocol protocol(Object v) {
        for (Protocol p : Protocol.values()) if (p.nftName().equals(v)) return p;
        if (Long.valueOf(6).equals(v)) return Protocol.TCP;
        if (Long.valueOf(17).equals(v)) return Protocol.UDP;
        if (Long.valueOf(132).equals(v)) return Protocol.SCTP;
        throw new NotOurs("protocol " + Json.write(v));
    }

    // ---- JSON shape helpers: wrong shapes are foreign content, not crashes ----

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o, String what) {
        if (o instanceof Map<?, ?> m) return (Map<String, Object>) m;
        throw new NotOurs(what + " is not an object: " + Json.write(o));
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object o, String what) {
        if (o instanceof List<?> l) return (List<Object>) l;
        throw new NotOurs(what + " is not an array: " + Json.write(o));
    }

    private static String string(Object o) {
        if (o instanceof String s) return s;
        throw new NotOurs("expected a string, found " + Json.write(o));
    }

    private static String optString(Object o) { return o == null ? null : string(o); }

    /** The items of {@code {"concat": [...]}} or {@code {"set": [...]}} (per {@code key}), or {@code expr} alone. */
    private static List<Object> itemsOr(Object expr, String key) {
        return expr instanceof Map<?, ?> m && m.containsKey(key) ? list(m.get(key), key) : List.of(expr);
    }

    /** A single string or an array of strings (nft prints a one-element list either way, depending on version). */
    private static List<String> strings(Object o) {
        if (o instanceof String s) return List.of(s);
        return list(o, "string list").stream().map(KernelTableParser::string).toList();
    }

    private static int intIn(Object o, long min, long max, String what) {
        if (o instanceof Long l && l >= min && l <= max) return (int) (long) l;
        throw new NotOurs(what + " " + Json.write(o) + " outside " + min + ".." + max);
    }

    /** {@code o} as an object holding no keys but {@code allowed}. */
    private static Map<String, Object> object(Object o, String what, String... allowed) {
        Map<String, Object> m = map(o, what);
        keys(m, Set.of(allowed));
        return m;
    }

    private static void keys(Map<String, Object> m, Set<String> allowed) {
        Set<String> extra = extraKeys(m, allowed);
        if (!extra.isEmpty()) throw new NotOurs("unknown properties " + extra);
    }

    private static Set<String> extraKeys(Map<String, Object> m, Set<String> allowed) {
        Set<String> extra = new java.util.TreeSet<>(m.keySet());
        extra.removeAll(allowed);
        return extra;
    }
}
