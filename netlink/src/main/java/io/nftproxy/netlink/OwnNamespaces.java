package io.nftproxy.netlink;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Network namespaces this process makes for itself and deletes again (the demo's hosts, the kernel tests'
 * throwaway nodes), so nothing they do reaches the host's ruleset, addresses or routes. Names are
 * {@code nftp-<tag>-<pid>-<suffix>}: unique per run, recognisable as ours, and findable again after an interrupted
 * run ({@link #deleteExisting}).
 */
public final class OwnNamespaces {
    /** Generous for one {@code ip netns} call; a hung one fails instead of hanging the caller. */
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private OwnNamespaces() {}

    /**
     * Why namespaces cannot be made here, or empty when they can: that needs root (CAP_NET_ADMIN in the initial user
     * namespace), the {@code ip} and {@code nft} commands, and whatever else the caller names (e.g. {@code conntrack}).
     */
    public static Optional<String> unavailabilityCause(String... alsoNeeded) {
        if (!Commands.isRoot()) return Optional.of("needs root (uid 0) to create network namespaces");
        return Stream.concat(Stream.of("ip", "nft"), Stream.of(alsoNeeded)).filter(cmd -> Commands.executable(cmd).isEmpty())
                .findFirst().map(cmd -> "the " + cmd + " command is not installed");
    }

    /** {@code nftp-<tag>-<pid>-}: what every namespace this process creates with {@code tag} starts with. */
    public static String prefix(String tag) { return "nftp-" + tag + "-" + ProcessHandle.current().pid() + "-"; }

    /**
     * Creates {@code nftp-<tag>-<pid>-<suffix>}. {@code tag}: 1-8 of {@code [a-z0-9]} saying who made it;
     * {@code suffix}: 1-32 of {@code [a-z0-9-]}, unique within the process (the caller keeps it so).
     */
    public static NetworkNamespace create(String tag, String suffix) throws IOException {
        if (!tag.matches("[a-z0-9]{1,8}")) throw new IllegalArgumentException("tag must be 1-8 of [a-z0-9]: " + tag);
        if (!suffix.matches("[a-z0-9][a-z0-9-]{0,31}")) throw new IllegalArgumentException("suffix must be 1-32 of [a-z0-9-]: " + suffix);
        unavailabilityCause().ifPresent(cause -> { throw new IllegalStateException(cause); });
        String name = prefix(tag) + suffix;
        ipNetns("add", name);
        return NetworkNamespace.named(name);
    }

    /** Deletes {@code netns} (and with it every table, address and interface inside). */
    public static void delete(NetworkNamespace netns) throws IOException {
        ipNetns("del", netns.name().orElseThrow(() -> new IllegalArgumentException("the host's namespace is not ours to delete")));
    }

    /** The namespaces this process created with {@code tag} that still exist, by name. */
    public static List<String> existing(String tag) throws IOException {
        String prefix = prefix(tag);
        // "NAME" or "NAME (id: N)", one per line.
        return ipNetns("list").lines().map(l -> l.split(" ", 2)[0]).filter(n -> n.startsWith(prefix)).sorted().toList();
    }

    /**
     * Deletes what {@link #existing} lists: the sweep after an interrupted run, which may have been stopped between
     * creating a namespace and handing it to whoever deletes it. Returns the names it deleted.
     */
    public static List<String> deleteExisting(String tag) throws IOException {
        List<String> names = existing(tag);
        for (String n : names) ipNetns("del", n);
        return names;
    }

    private static String ipNetns(String... args) throws IOException {
        String ip = Commands.executable("ip").orElseThrow(() -> new IOException("the ip command is not installed"));
        Commands.Result r = Commands.run(TIMEOUT, null, Stream.concat(Stream.of(ip, "netns"), Stream.of(args)).toArray(String[]::new));
        if (!r.ok()) throw new IOException("ip netns " + String.join(" ", args) + " failed: " + r.stderr().strip());
        return r.stdout();
    }
}
