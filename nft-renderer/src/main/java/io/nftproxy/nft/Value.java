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

    @Override default int compareTo(Value o) {
        if (this instanceof Addr a && o instanceof Addr b) return a.ip().compareTo(b.ip());
        if (this instanceof Proto a && o instanceof Proto b) return a.protocol().compareTo(b.protocol());
        if (this instanceof Port a && o instanceof Port b) return Integer.compare(a.port(), b.port());
        return getClass().getSimpleName().compareTo(o.getClass().getSimpleName());
    }
}
