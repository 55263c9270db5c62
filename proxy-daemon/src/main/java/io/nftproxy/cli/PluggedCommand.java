package io.nftproxy.cli;

/**
 * A subcommand that a jar beside this one contributes, found through {@link java.util.ServiceLoader}
 * ({@code META-INF/services/io.nftproxy.cli.PluggedCommand}); the class carries picocli's {@code @Command}. The demo
 * comes this way: a checkout's {@code ./nftproxy} puts its jar on the class path, the release ships without it.
 */
public interface PluggedCommand {}
