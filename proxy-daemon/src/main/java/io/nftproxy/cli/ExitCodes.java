package io.nftproxy.cli;

/** Process exit codes of every {@code nftproxy} subcommand. Scripts test them; changing one breaks them. */
public final class ExitCodes {
    /** Done as asked. */
    public static final int OK = 0;
    /** The input could not be read: the manifest directory is missing or unreadable. */
    public static final int INPUT_UNREADABLE = 1;
    /** A flag or its value was wrong; nothing was done. */
    public static final int USAGE = 2;
    /** {@code trace} could not follow the packet to an end (a jump loop or too many paths in the table). */
    public static final int UNTRACEABLE = 3;

    private ExitCodes() {}
}
