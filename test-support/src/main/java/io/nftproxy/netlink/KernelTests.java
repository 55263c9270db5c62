package io.nftproxy.netlink;

import org.junit.jupiter.api.Assumptions;

/** The one check every kernel test makes first; shared with the other modules' tests through this module's test jar. */
public final class KernelTests {
    private KernelTests() {}

    /**
     * Skips the calling test, printing why, unless namespaces can be made here and {@code ip}, {@code nft} and the
     * commands named are installed. A skip is printed because a silently skipped kernel suite looks green.
     */
    public static void assumeAvailable(String... alsoNeeded) {
        String cause = KernelNamespace.unavailabilityCause(alsoNeeded).orElse(null);
        if (cause != null) System.out.println("SKIPPED kernel test: " + cause);
        Assumptions.assumeTrue(cause == null, cause);
    }
}
