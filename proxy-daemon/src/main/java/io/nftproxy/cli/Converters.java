package io.nftproxy.cli;

import io.nftproxy.config.GoDuration;
import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;
import io.nftproxy.render.TableLayout;
import io.nftproxy.trace.Origin;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.Function;

/**
 * picocli converters for the address flags, {@code --table-layout}, {@code --request-timeout} and the packet flags of
 * {@code nftproxy trace}. Each message names the value and what is allowed; picocli prefixes it with the flag.
 */
final class Converters {
    private Converters() {}

    /** {@code parse(value)}; when that fails or gives null, the message "VALUE is not {@code notA}". */
    private static <T> T parsed(String value, Function<String, T> parse, String notA) {
        try {
            T t = parse.apply(value);
            if (t != null) return t;
        } catch (RuntimeException e) {
            // reported below
        }
        throw new TypeConversionException(InvalidInputException.printable(value) + " is not " + notA);
    }

    static final class Address implements ITypeConverter<IpAddress> {
        @Override public IpAddress convert(String value) {
            return parsed(value, v -> IpAddress.parse(v.strip()),
                    "an IP address (allowed: an IPv4 or IPv6 literal such as 192.168.10.20 or fd00::20)");
        }
    }

    static final class Prefix implements ITypeConverter<IpPrefix> {
        @Override public IpPrefix convert(String value) {
            return parsed(value, IpPrefix::parse,
                    "a CIDR (allowed: an IPv4 or IPv6 prefix such as 172.20.0.0/16 or fd00:172:20::/64)");
        }
    }

    /** {@code upstream}, {@code fast} or {@code flat}, case-insensitively. */
    static final class Layout implements ITypeConverter<TableLayout> {
        @Override public TableLayout convert(String value) {
            return parsed(value, TableLayout::parse, "a table layout (allowed: upstream, fast, flat)");
        }
    }

    /** A positive Go duration. */
    static final class Timeout implements ITypeConverter<Duration> {
        @Override public Duration convert(String value) {
            return parsed(value, v -> {
                Duration d = GoDuration.parse("--request-timeout", v);
                return d.isZero() ? null : d;
            }, "a timeout (allowed: a positive duration such as 30s or 2m)");
        }
    }

    static final class Proto implements ITypeConverter<Protocol> {
        @Override public Protocol convert(String value) {
            return parsed(value, v -> Arrays.stream(Protocol.values())
                    .filter(p -> p.nftName().equals(v.strip().toLowerCase(Locale.ROOT))).findFirst().orElse(null),
                    "a service protocol (allowed: tcp, udp, sctp)");
        }
    }

    static final class Port implements ITypeConverter<Integer> {
        @Override public Integer convert(String value) {
            return parsed(value, v -> {
                int port = Integer.parseInt(v.strip());
                return port >= 1 && port <= 65535 ? port : null;
            }, "a port (allowed: an integer 1..65535)");
        }
    }

    static final class Via implements ITypeConverter<ServiceDestination.Via> {
        @Override public ServiceDestination.Via convert(String value) {
            return parsed(value, ServiceDestination.Via::parse,
                    "a Service address (allowed: cluster-ip, node-port, external-ip, load-balancer)");
        }
    }

    static final class From implements ITypeConverter<Origin> {
        @Override public Origin convert(String value) {
            return parsed(value, v -> Arrays.stream(Origin.values())
                    .filter(o -> o.name().equalsIgnoreCase(v.strip())).findFirst().orElse(null),
                    "an origin (allowed: external, pod, host)");
        }
    }
}
