package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.NetworkNamespace;

import java.io.IOException;
import java.util.Locale;
import java.util.function.LongConsumer;

/**
 * Chooses the {@link NftClient} implementation. Semantics of the modes:
 * <ul>
 * <li>{@code library}: libnftables in-process, or fail (kind UNSUPPORTED) if it cannot be loaded;</li>
 * <li>{@code exec}: the {@code nft} binary, always;</li>
 * <li>{@code auto}: the library when {@link NftLibrary#isAvailable()}, else the binary.</li>
 * </ul>
 * The returned {@link Selection#reason()} says why, for the caller to log once at start.
 */
public final class NftClients {
    private NftClients() {}

    public enum Mode {
        LIBRARY, EXEC, AUTO;

        /** {@code library}, {@code exec} or {@code auto}, case-insensitive. */
        public static Mode parse(String s) {
            if (s != null) {
                for (Mode m : values()) if (m.name().equalsIgnoreCase(s.strip())) return m;
            }
            throw new IllegalArgumentException("nft mode: got " + s + ", allowed: library, exec, auto");
        }

        public String flagValue() { return name().toLowerCase(Locale.ROOT); }
    }

    /** The client chosen and, in one sentence, why. */
    public record Selection(NftClient client, String reason) {}

    /** As {@link #createInNamespace(Mode, NetworkNamespace, LongConsumer)}, telling nobody of nft children. */
    public static Selection createInNamespace(Mode mode, NetworkNamespace netns) throws IOException {
        return createInNamespace(mode, netns, pid -> {});
    }

    /**
     * A client bound to {@code netns}: the library client on a thread in it, or {@code nft} run there (behind
     * {@code ip netns exec NAME} for a named one). The JVM's other
     * threads stay where they are. {@code childStarted} hears the pid of every nft child the exec client starts, so
     * the change monitor can tell our own commits from anyone else's.
     */
    public static Selection createInNamespace(Mode mode, NetworkNamespace netns, LongConsumer childStarted) throws IOException {
        String in = netns.name().map(n -> " in netns " + n).orElse("");
        if (mode != Mode.EXEC && NftLibrary.isAvailable()) {
            return new Selection(LibNftablesClient.inNamespace(netns),
                    "nft mode " + mode.flagValue() + ": libnftables loaded in-process (" + NftLibrary.SONAME + ")"
                            + netns.name().map(n -> ", netns " + n).orElse(""));
        }
        if (mode == Mode.LIBRARY) NftLibrary.get(); // throws UNSUPPORTED with the cause
        ExecNftClient exec = ExecNftClient.inNamespace(netns, ExecNftClient.DEFAULT_TIMEOUT, childStarted);
        if (mode == Mode.EXEC) return new Selection(exec, "nft mode exec: running the nft binary" + in);
        return new Selection(exec, "nft mode auto: libnftables unavailable ("
                + NftLibrary.unavailabilityCause() + "), falling back to the nft binary" + in);
    }
}
