package io.nftproxy.nft;

import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;

import java.util.List;

/** One match expression of a rule. All match expressions of a rule must hold for its statements to run. */
public sealed interface Match {
    /** {@code ct state new} */
    record CtStateNew() implements Match {}

    /** {@code ct status dnat}: the connection was destination-NATed. */
    record CtStatusDnat() implements Match {}

    /** {@code f1 . f2 ... @set} or {@code ... != @set}. */
    record SetLookup(List<Field> fields, String set, boolean negated) implements Match {
        public SetLookup { fields = List.copyOf(fields); }
    }

    /** {@code ip saddr 10.0.0.0/8}, {@code ip daddr != { a, b }}: an address against literal prefixes. */
    record AddrIn(Field field, boolean negated, List<IpPrefix> prefixes) implements Match {
        public AddrIn { prefixes = List.copyOf(prefixes); }
    }

    /** {@code meta l4proto tcp} */
    record ProtoIs(Protocol protocol) implements Match {}

    /** {@code fib saddr type local} / {@code fib daddr type local} */
    record FibLocal(Field field) implements Match {}

    /** {@code mark and MASK != 0} */
    record MarkBits(int mask) implements Match {}

    /**
     * {@code numgen random mod MODULUS VALUE}: holds for one random draw in {@code modulus}, drawn afresh by every
     * rule that has it. A cascade of these (mod N, N-1, ..., 2, then unconditional) picks each of N alternatives
     * with probability 1/N without any set or map, which keeps the kernel's cost per rule constant.
     */
    record NumgenIs(int modulus, int value) implements Match {
        public NumgenIs {
            if (modulus < 1 || value < 0 || value >= modulus) {
                throw new IllegalArgumentException("numgen random mod " + modulus + " never yields " + value);
            }
        }
    }
}
