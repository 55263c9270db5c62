package io.nftproxy.netlink;

import org.junit.jupiter.api.Assumptions;

import java.util.Optional;
import java.util.stream.Stream;

/**
 * The one check every kernel test makes first. A skip is printed, naming the test class and the reason, because a
 * silently skipped kernel suite looks green.
 */
public final class KernelTests {
    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);

    private KernelTests() {}

    /**
     * Skips the calling test unless namespaces can be made here and {@code ip}, {@code nft} and the commands named are
     * installed.
     */
    public static void assumeAvailable(String... alsoNeeded) {
        skipIf(callerName(), KernelNamespace.unavailabilityCause(alsoNeeded));
    }

    /**
     * As {@link #assumeAvailable}, and also none of {@code otherNeeds} is missing (an API server's binaries, a
     * container runtime, the topology's commands): the kernel's cause first, then the first present one in order.
     */
    @SafeVarargs
    public static void assumeAvailableAnd(Optional<String>... otherNeeds) {
        skipIf(callerName(), Stream.concat(Stream.of(KernelNamespace.unavailabilityCause()), Stream.of(otherNeeds))
                .flatMap(Optional::stream).findFirst());
    }

    /** The skip itself, for a test that needs no kernel but something else that may be missing. */
    @SafeVarargs
    public static void skipIfMissing(Optional<String>... causes) {
        skipIf(callerName(), Stream.of(causes).flatMap(Optional::stream).findFirst());
    }

    /** {@code cause} when {@code missing}: a need of one test, for {@link #assumeAvailableAnd} and {@link #skipIfMissing}. */
    public static Optional<String> causeIf(boolean missing, String cause) {
        return missing ? Optional.of(cause) : Optional.empty();
    }

    /** Skips, printing {@code SKIPPED who: cause}, when {@code cause} is present. */
    public static void skipIf(String who, Optional<String> cause) {
        cause.ifPresent(c -> System.out.println("SKIPPED " + who + ": " + c));
        Assumptions.assumeTrue(cause.isEmpty(), cause.orElse(null));
    }

    /** The top-level class of whoever called into this class: the test a skip is reported for. */
    private static String callerName() {
        Class<?> c = WALKER.walk(frames -> frames.map(StackWalker.StackFrame::getDeclaringClass)
                .filter(k -> k != KernelTests.class).findFirst().orElseThrow());
        while (c.getEnclosingClass() != null) c = c.getEnclosingClass();
        return c.getSimpleName();
    }
}
