package io.nftproxy.netlink.nft;

import jnr.ffi.LibraryLoader;

/**
 * Whether libnftables can be used in this process, decided once on first use and never by throwing: a host
 * without {@code libnftables1}, or without jffi's native stub for this platform, makes {@link #isAvailable()}
 * false and {@link #unavailabilityCause()} say why. Callers then fall back to {@link ExecNftClient}.
 *
 * <p>The library is loaded by its soname {@value #SONAME}: production hosts carry only the runtime package
 * ({@code libnftables1}); the unversioned {@code libnftables.so} link comes from {@code libnftables-dev}.
 */
public final class NftLibrary {
    public static final String SONAME = "libnftables.so.1";

    private NftLibrary() {}

    /** Class-holder idiom: the JVM runs {@code Holder}'s initialiser once, on first access, thread-safely. */
    private static final class Holder {
        static final LibNftables LIB;
        static final Throwable CAUSE;

        static {
            LibNftables lib = null;
            Throwable cause = null;
            try {
                lib = LibraryLoader.create(LibNftables.class).failImmediately().load(SONAME);
            } catch (Throwable t) { // LinkageError and UnsatisfiedLinkError included: absence is an answer here
                cause = t;
            }
            LIB = lib;
            CAUSE = cause;
        }
    }

    public static boolean isAvailable() { return Holder.LIB != null; }

    /** Why the library cannot be used, or null when it can. */
    public static Throwable unavailabilityCause() { return Holder.CAUSE; }

    /** The binding. Throws {@link NftException} of kind UNSUPPORTED when the library is unavailable. */
    public static LibNftables get() {
        if (Holder.LIB == null) {
            throw NftException.of(NftException.Kind.UNSUPPORTED, "libnftables is not available: " + Holder.CAUSE, Holder.CAUSE);
        }
        return Holder.LIB;
    }
}
