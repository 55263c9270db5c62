package io.nftproxy.cli;

import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.net.Protocol;
import io.nftproxy.trace.Origin;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.util.Locale;

/**
 * picocli converters for the address flags and the packet flags of {@code nftproxy trace}. Each message names the
 * value and what is allowed; picocli prefixes it with the flag.
 */
final class Converters {
    private Converters() {}

    static final class Address implements ITypeConverter<IpAddress> {
        @Override public IpAddress convert(String value) {
            try {
                return IpAddress.parse(value.strip());
            } catch (InvalidInputException e) {
                throw new TypeConversionException(InvalidInputException.printable(value)
                        + " is not an IP address (allowed: an IPv4 or IPv6 literal such as 192.168.10.20 or fd00::20)");
            }
        }
    }

    static final class Prefix implements ITypeConverter<IpPrefix> {
        @Override public IpPrefix convert(String value) {
            try {
                return IpPrefix.parse(value);
            } catch (InvalidInputException e) {
                throw new TypeConversionException(InvalidInputException.printable(value)
                        + " is not a CIDR (allowed: an IPv4 or IPv6 prefix such as 172.20.0.0/16 or fd00:172:20::/64)");
            }
        }
    }

    static final class Proto implements ITypeConverter<Protocol> {
        @Override public Protocol convert(String value) {
            for (Protocol p : Protocol.values()) {
                if (p.nftName().equals(value.strip().toLowerCase(Locale.ROOT))) return p;
            }
            throw new TypeConversionException(InvalidInputException.printable(value)
                    + " is not a service protocol (allowed: tcp, udp, sctp)");
        }
    }

    static final class Port implements ITypeConverter<Integer> {
        @Override public Integer convert(String value) {
            int port;
            try {
                port = Integer.parseInt(value.strip());
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (port < 1 || port > 65535) {
                throw new TypeConversionException(InvalidInputException.printable(value)
                        + " is not a port (allowed: an integer 1..65535)");
            }
            return port;
        }
    }

    static final class From implements ITypeConverter<Origin> {
        @Override public Origin convert(String value) {
            for (Origin o : Origin.values()) {
                if (o.name().equalsIgnoreCase(value.strip())) return o;
            }
            throw new TypeConversionException(InvalidInputException.printable(value)
                    + " is not an origin (allowed: external, pod, host)");
        }
    }
}
