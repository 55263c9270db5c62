package io.nftproxy.cli;

import io.nftproxy.netlink.NetworkNamespace;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code --netns NAME} parsed, once, into the namespace every command then hands on; a name that is not one is a
 * usage error naming it. Without the option a command acts on {@link NetworkNamespace#host()}.
 */
final class NetnsOption implements ITypeConverter<NetworkNamespace> {
    @Override public NetworkNamespace convert(String value) {
        try {
            return NetworkNamespace.named(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
