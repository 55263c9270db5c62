package io.nftproxy.nft;

import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A named set, or a map when {@code valueType} is non-null: {@code verdict}, or for a data map the concatenated
 * type it yields ({@code ipv4_addr . inet_service}). {@code timeoutSeconds} is 0 for no timeout. Flags are written
 * in the given order.
 *
 * <p>A set declared by expression ({@code typeof}) carries it in {@code typeof}; {@code keyType} and
 * {@code valueType} then hold what the kernel reports for it (the numgen slot as {@code integer}), so a set read
 * back compares equal to the one written.
 */
public record NftSet(String name, List<String> keyType, String valueType, List<String> flags, int timeoutSeconds,
                     String comment, Typeof typeof) implements NftObject {
    public NftSet {
        keyType = List.copyOf(keyType);
        flags = List.copyOf(flags);
    }

    public NftSet(String name, List<String> keyType, String valueType, List<String> flags, int timeoutSeconds,
                  String comment) {
        this(name, keyType, valueType, flags, timeoutSeconds, comment, null);
    }

    public boolean isMap() { return valueType != null; }

    /**
     * {@code typeof KEY . numgen random mod N : DATA}: the declaration of a {@code flat} endpoint map, whose key ends
     * in a numgen draw (which has no named type, hence {@code typeof}) and whose data is an address and a port.
     */
    public record Typeof(List<Field> key, int numgenModulus, List<Field> data) {
        public Typeof {
            key = List.copyOf(key);
            data = List.copyOf(data);
            if (numgenModulus < 1) throw new IllegalArgumentException("numgen random mod " + numgenModulus);
        }
    }

    /**
     * The data map {@code name} declared as {@code typeof}, with the key and value types the kernel reports for it.
     * {@code addrType} is the family's address type ({@code ipv4_addr} / {@code ipv6_addr}).
     */
    public static NftSet typeofMap(String name, Typeof t, String addrType, String comment) {
        List<String> key = Stream.concat(t.key().stream().map(f -> typeName(f, addrType)), Stream.of("integer")).toList();
        String data = t.data().stream().map(f -> typeName(f, addrType)).collect(Collectors.joining(" . "));
        return new NftSet(name, key, data, List.of(), 0, comment, t);
    }

    private static String typeName(Field f, String addrType) {
        return switch (f) {
            case SADDR, DADDR -> addrType;
            case L4PROTO -> "inet_proto";
            case DPORT, TCP_DPORT, UDP_DPORT, SCTP_DPORT -> "inet_service";
        };
    }
}
