package io.nftproxy.nft;

import java.util.List;

/**
 * A named set, or a map when {@code valueType} is non-null (always {@code verdict} here). {@code timeoutSeconds}
 * is 0 for no timeout. Flags are written in the given order.
 */
public record NftSet(String name, List<String> keyType, String valueType, List<String> flags, int timeoutSeconds,
                     String comment) implements NftObject {
    public NftSet {
        keyType = List.copyOf(keyType);
        flags = List.copyOf(flags);
    }

    public boolean isMap() { return valueType != null; }
}
