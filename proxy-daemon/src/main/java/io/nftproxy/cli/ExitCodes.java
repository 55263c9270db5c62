package io.nftproxy.cli;

/** Process exit codes of every {@code nftproxy} subcommand. Scripts test them; changing one breaks them. */
public final class ExitCodes {
    /** Done as asked. */
    public static final int OK = 0;
    /** The input could not be read: the manifest directory is missing or unreadable. */
    public static final int INPUT_UNREADABLE = 1;
    /**
     * A flag or its value was wrong, or a file only an operator can put right: the {@code --config} file or the
     * kubeconfig unreadable or malformed. Nothing was done; the systemd unit does not restart on it
     * (RestartPreventExitStatus), so the failure and its message stay in {@code systemctl status}. An API server that
     * cannot be used is never an exit: the daemon retries it forever.
     */
    public static final int USAGE = 2;
    /** nft cannot be used here: neither libnftables nor the nft binary works (missing, broken namespace). */
    public static final int NFT_UNAVAILABLE = 3;
    /** nft said "Operation not permitted": the process lacks CAP_NET_ADMIN in the network namespace. */
    public static final int PERMISSION_DENIED = 4;
    /** The kernel or nft refused the transaction; the previous table (if any) is unchanged. */
    public static final int SYNC_FAILED = 5;
    /** {@code trace} could not follow the packet to an end (a jump loop or too many paths in the table). */
    public static final int UNTRACEABLE = 6;
    /**
     * {@code demo} did not go as it should: a step failed, or a request went unanswered or reached other backends
     * than expected. It cleaned up all the same.
     */
    public static final int DEMO_FAILED = 7;
    /** {@code trace --kernel}: the kernel's table sends the packet elsewhere than the table the cluster implies. */
    public static final int KERNEL_DIFFERS = 9;

    /** {@code cleanup} refused: a daemon runs in this network namespace and would write the tables again (--force overrides). */
    public static final int DAEMON_RUNNING = 8;

    /**
     * {@code run --dry-run} with the Kubernetes API as its source: the API server could not be used (unreachable, not
     * answering within 5 s, its certificate not signed by the kubeconfig's CA, or the credentials refused). The
     * daemon itself never exits for this: it retries until it can use the server.
     */
    public static final int API_UNUSABLE = 10;

    private ExitCodes() {}
}
