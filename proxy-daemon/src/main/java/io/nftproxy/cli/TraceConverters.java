package io.nftproxy.cli;

import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.Protocol;
import io.nftproxy.trace.Origin;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.util.Locale;

/**
 * picocli converters for the packet flags of {@code nftproxy trace}. Each message names the value and what is
 * allowed; picocli prefixes it with the flag.
 */
final class TraceConverters {
    private TraceConverters() {}

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
