package io.nftproxy.netlink.nft;

import java.io.IOException;
import java.util.List;
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

    /** As {@link #createInNamespace(Mode, String, LongConsumer)}, telling nobody of nft children. */
    public static Selection createInNamespace(Mode mode, String netns) throws IOException {
        return createInNamespace(mode, netns, pid -> {});
    }

    /**
     * A client bound to the named network namespace ({@code /run/netns/NAME}), or to the JVM's own when {@code netns}
     * is null: the library client on a thread that joined it, or {@code ip netns exec NAME nft}. The JVM's other
     * threads stay where they are. {@code childStarted} hears the pid of every nft child the exec client starts, so
     * the change monitor can tell our own commits from anyone else's.
     */
    public static Selection createInNamespace(Mode mode, String netns, LongConsumer childStarted) throws IOException {
        String in = netns == null ? "" : " in netns " + netns;
        if (mode != Mode.EXEC && NftLibrary.isAvailable()) {
            return new Selection(netns == null ? LibNftablesClient.create() : LibNftablesClient.inNamespace(netns),
                    "nft mode " + mode.flagValue() + ": libnftables loaded in-process (" + NftLibrary.SONAME + ")"
                            + (netns == null ? "" : ", netns " + netns));
        }
        if (mode == Mode.LIBRARY) NftLibrary.get(); // throws UNSUPPORTED with the cause
        ExecNftClient exec = netns == null ? new ExecNftClient(List.of("nft"), ExecNftClient.DEFAULT_TIMEOUT, childStarted)
                : ExecNftClient.inNamespace(netns, ExecNftClient.DEFAULT_TIMEOUT, childStarted);
        if (mode == Mode.EXEC) return new Selection(exec, "nft mode exec: running the nft binary" + in);
        return new Selection(exec, "nft mode auto: libnftables unavailable ("
                + NftLibrary.unavailabilityCause() + "), falling back to the nft binary" + in);
    }
}
