package io.nftproxy.nft;

import io.nftproxy.net.IpAddress;

import java.util.List;

/** What a rule does once its matches hold. A terminal verdict, if any, is always last. */
public sealed interface Statement {
    /** A plain verdict: jump, goto, drop, accept, return. */
    record Decide(Verdict verdict) implements Statement {}

    /** {@code reject}: ICMP(v6) port unreachable, which a TCP client sees as ECONNREFUSED. */
    record Reject() implements Statement {}

    /** {@code f1 . f2 ... vmap @map} */
    record VmapLookup(List<Field> fields, String map) implements Statement {
        public VmapLookup { fields = List.copyOf(fields); }
    }

    /** {@code numgen random mod N vmap { 0 : goto a , 1 : goto b }} */
    record NumgenVmap(List<Verdict> targets) implements Statement {
        public NumgenVmap { targets = List.copyOf(targets); }
    }

    /** {@code mark set mark or M} */
    record MarkOr(int mark) implements Statement {}

    /** {@code mark set mark xor M} */
    record MarkXor(int mark) implements Statement {}

    /** {@code masquerade fully-random} */
    record Masquerade() implements Statement {}

    /**
     * DNAT to one of the targets, picked by {@code numgen random mod N}. kube-proxy 1.36 writes the map form even
     * for a single target; {@code direct} writes {@code dnat to ip:port} for exactly one target (upstream master).
     */
    record Dnat(List<Target> targets, boolean direct) implements Statement {
        public Dnat {
            targets = List.copyOf(targets);
            if (targets.isEmpty()) throw new IllegalArgumentException("dnat needs at least one target");
            if (direct && targets.size() != 1) throw new IllegalArgumentException("direct dnat takes one target");
        }
    }

    /**
     * {@code dnat ip addr . port to KEY . numgen random mod N map @map}: DNAT to the address and port a named data
     * map holds for the packet's key and a fresh random slot 0 … N-1 (the {@code flat} layout's endpoint pick). When
     * the map has no element for the key and slot the statement does nothing and the packet goes on with the next
     * rule, as the kernel's lookup breaks the rule.
     */
    record DnatMap(List<Field> key, int numgenModulus, String map) implements Statement {
        public DnatMap {
            key = List.copyOf(key);
            if (numgenModulus < 1) throw new IllegalArgumentException("numgen random mod " + numgenModulus);
        }
    }

    /** {@code update @set { ip saddr }}: refresh a ClientIP affinity entry. */
    record UpdateSet(String set, Field field) implements Statement {}

    /** A DNAT destination. */
    record Target(IpAddress ip, int port) {}
}
