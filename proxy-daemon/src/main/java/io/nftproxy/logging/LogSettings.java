package io.nftproxy.logging;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;

import java.util.Locale;
import java.util.Map;

/**
 * How the daemon logs: kube-proxy's verbosity ({@code -v N}) and format ({@code --logging-format}), turned into the
 * levels log4j2.xml reads. kube-proxy logs its start, stop and problems at V(0), one line per sync at V(2) and
 * detail at V(4) and up; a Log4j level is coarser, so 0–1 is INFO, 2–3 adds the per-sync line ({@link #SYNCS}),
 * 4 and up is DEBUG for nftproxy and INFO for the libraries. Below 4 the libraries log only warnings.
 *
 * @param verbosity kube-proxy's -v, 0 and up
 */
public record LogSettings(int verbosity, Format format) {
    /** The logger of the one line per sync (kube-proxy's "SyncProxyRules complete" is V(2)). */
    public static final String SYNCS = "io.nftproxy.syncs";

    /** {@code text}: logfmt, one event a line; {@code json}: one JSON object a line. */
    public enum Format {
        TEXT, JSON;

        public static Format parse(String s) {
            return switch (s) {
                case "text" -> TEXT;
                case "json" -> JSON;
                default -> throw new IllegalArgumentException(s + " is not a logging format (allowed: text, json)");
            };
        }

        public String flagValue() { return name().toLowerCase(Locale.ROOT); }
    }

    public static final LogSettings DEFAULT = new LogSettings(0, Format.TEXT);

    /** The system properties log4j2.xml reads, for these settings. */
    public Map<String, String> properties() {
        return Map.of("nftproxy.log.format", format.flagValue(),
                "nftproxy.log.ours", verbosity >= 4 ? "debug" : "info",
                "nftproxy.log.syncs", verbosity >= 2 ? "info" : "warn",
                "nftproxy.log.others", verbosity >= 4 ? "info" : "warn");
    }

    /** Reconfigures this process's logging; loggers already handed out follow. */
    public void apply() {
        properties().forEach(System::setProperty);
        ((LoggerContext) LogManager.getContext(false)).reconfigure();
    }
}
