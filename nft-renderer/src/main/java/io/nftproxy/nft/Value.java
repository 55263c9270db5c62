package io.nftproxy.nft;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.Protocol;

/** One component of a set element's key. Only typed values exist: nothing free-form reaches an element. */
public sealed interface Value extends Comparable<Value> {
    record Addr(IpAddress ip) implements Value {}
    record Proto(Protocol protocol) implements Value {}
    record Port(int port) implements Value {
        public Port {
            if (port < 1 || port > 65535) throw new IllegalArgumentException("port " + port);
        }
    }

    /** A slot of a {@code numgen random mod N} draw, 0 … N-1: the last part of a {@code flat} endpoint map's key. */
    record Index(int index) implements Value {
        public Index {
            if (index < 0) throw new IllegalArgumentException("numgen slot " + index);
        }
    }

    @Override default int compareTo(Value o) {
        if (this instanceof Addr a && o instanceof Addr b) return a.ip().compareTo(b.ip());
        if (this instanceof Proto a && o instanceof Proto b) return a.protocol().compareTo(b.protocol());
        if (this instanceof Port a && o instanceof Port b) return Integer.compare(a.port(), b.port());
        if (this instanceof Index a && o instanceof Index b) return Integer.compare(a.index(), b.index());
        return getClass().getSimpleName().compareTo(o.getClass().getSimpleName());
    }
}
