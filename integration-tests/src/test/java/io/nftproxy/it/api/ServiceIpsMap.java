package io.nftproxy.it.api;

import io.nftproxy.netlink.KernelNamespace;

import java.io.IOException;
import java.time.Duration;

/**
 * What a packet to a ClusterIP meets first: how many Services the kernel's {@code service-ips} map holds now. An
 * element counts when it dispatches: a {@code goto} into a service chain, or in the flat layout {@code continue}
 * on to the flat rules (the splitter sends it with the Service's flat elements, never before them).
 */
final class ServiceIpsMap {
    private ServiceIpsMap() {}

    /** Elements of {@code ip kube-proxy service-ips} in {@code node}; 0 when the map or the table is missing. */
    static int count(KernelNamespace node) {
        try {
            KernelNamespace.Result r = node.exec(Duration.ofSeconds(60), null, "nft", "list", "map", "ip", "kube-proxy", "service-ips");
            if (!r.ok()) return 0;
            return occurrences(r.stdout(), ": goto service-") + occurrences(r.stdout(), ": continue");
        } catch (IOException e) {
            return 0;
        }
    }

    /**
     * Whether an nft listing holds a {@code service-ips} element for {@code ip . proto . port}, with or without the
     * element comment ({@code namespace/name:port}) that the flat layout writes before the verdict.
     */
    static boolean holds(String listing, String ip, String proto, int port) {
        return java.util.regex.Pattern.compile("(?m)" + java.util.regex.Pattern.quote(ip + " . " + proto + " . " + port)
                + "( comment \"[^\"]*\")? :").matcher(listing).find();
    }

    private static int occurrences(String text, String needle) {
        int c = 0;
        for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) c++;
        return c;
    }
}
