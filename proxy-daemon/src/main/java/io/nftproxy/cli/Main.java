package io.nftproxy.cli;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** Entry point of {@code nftproxy.jar}. */
public final class Main {
    /** The level of Log4j's messages about itself (log4j2.xml's status), not of ours. */
    static final String LOG4J_STATUS_LEVEL = "nftproxy.log.status";

    private Main() {}

    public static void main(String[] args) {
        quietLog4jWhereTheHostNameDoesNotResolve();
        System.exit(NftproxyCommand.newCommandLine().execute(NftproxyCommand.asKubeProxyCommandLine(args)));
    }

    /**
     * Log4j looks up this host's name when it starts, for a {@code ${hostName}} no layout of ours uses. Where the
     * name does not resolve (a network namespace with only lo, a name missing from /etc/hosts) it prints an ERROR
     * with a 40-line stack trace before our first line. Then, and only then, its status logger is quiet; a name
     * that resolves costs nothing more, as the JVM caches it for Log4j's own lookup.
     */
    static void quietLog4jWhereTheHostNameDoesNotResolve() {
        if (System.getProperty(LOG4J_STATUS_LEVEL) != null) return;
        try {
            InetAddress.getLocalHost();
        } catch (UnknownHostException e) {
            System.setProperty(LOG4J_STATUS_LEVEL, "OFF");
        }
    }
}
