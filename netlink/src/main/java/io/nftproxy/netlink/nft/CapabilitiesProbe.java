package io.nftproxy.netlink.nft;

import io.nftproxy.nft.Capabilities;

import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds out once, at start, what this host's nft accepts. Every question is asked with a dry run ({@code nft -c}):
 * the kernel validates the batch and commits nothing, so the probe never changes the ruleset. The scripts name a
 * throwaway table {@code nftproxy-probe-<pid>} so that even a dry run never refers to a table someone uses.
 */
public final class CapabilitiesProbe {
    private static final Pattern METAINFO_VERSION =
            Pattern.compile("\"metainfo\"\\s*:\\s*\\{[^}]*?\"version\"\\s*:\\s*\"([^\"]+)\"");

    private CapabilitiesProbe() {}

    /** Probes through a libnftables ctx; must run on the ctx's thread. */
    public static Capabilities probe(NftContext ctx) {
        return probe(versionFromMetainfo(ctx.listJson("tables")), ctx::check);
    }

    /** Probes through the {@code nft} binary the client runs. */
    public static Capabilities probe(ExecNftClient client) {
        return probe(client.version(), client::check);
    }

    static Capabilities probe(String version, Consumer<String> check) {
        String t = probeTable();
        boolean elementComments = accepts(check, "add table ip " + t + "\n"
                + "add set ip " + t + " s { type ipv4_addr ; }\n"
                + "add element ip " + t + " s { 192.0.2.1 comment \"probe\" }\n");
        // nft 1.0.6 (Debian 12) refuses it: "invalid priority expression value in this context".
        boolean symbolicOutputPriority = accepts(check, "add table ip " + t + "\n"
                + "add chain ip " + t + " c { type nat hook output priority dstnat ; }\n");
        return new Capabilities(version, elementComments, symbolicOutputPriority);
    }

    /** {@code nftproxy-probe-<pid>}. */
    public static String probeTable() { return "nftproxy-probe-" + ProcessHandle.current().pid(); }

    /** The version in {@code {"nftables": [{"metainfo": {"version": "1.0.6", ...}}, ...]}}. */
    static String versionFromMetainfo(String json) {
        Matcher m = METAINFO_VERSION.matcher(json);
        if (!m.find()) throw new NftException(NftException.Kind.FAILED, "no metainfo version in nft's JSON output", json, null, 0);
        return m.group(1);
    }

    /**
     * True when the dry run passes, false when nft refuses the script. Lacking permission says nothing about nft's
     * abilities, and nothing else would work either, so that is thrown.
     */
    private static boolean accepts(Consumer<String> check, String script) {
        try {
            check.accept(script);
            return true;
        } catch (NftException e) {
            if (e.isPermission()) throw e;
            return false;
        }
    }
}
