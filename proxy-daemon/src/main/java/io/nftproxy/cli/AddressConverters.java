package io.nftproxy.cli;

import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** picocli converters for address flags. picocli prefixes their messages with the flag name. */
final class AddressConverters {
    private AddressConverters() {}

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
}
