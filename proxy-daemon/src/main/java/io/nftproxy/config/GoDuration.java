package io.nftproxy.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as Kubernetes configuration writes them (Go's format): {@code 1s}, {@code 500ms}, {@code 1h2m3.5s}. */
public final class GoDuration {
    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|us|µs|ns|h|m|s)");

    private GoDuration() {}

    public static Duration parse(String field, String text) {
        if (text == null || text.isEmpty()) throw new ConfigException(field, text, "a duration such as 500ms, 1s or 1h0m0s");
        if (text.equals("0")) return Duration.ZERO;
        Matcher m = PART.matcher(text);
        int at = 0;
        double nanos = 0;
        while (at < text.length()) {
            if (!m.find(at) || m.start() != at) throw new ConfigException(field, text, "a duration such as 500ms, 1s or 1h0m0s");
            double v = Double.parseDouble(m.group(1));
            nanos += v * switch (m.group(2)) {
                case "h" -> 3_600e9;
                case "m" -> 60e9;
                case "s" -> 1e9;
                case "ms" -> 1e6;
                case "us", "µs" -> 1e3;
                default -> 1;
            };
            at = m.end();
        }
        if (nanos > 365 * 24 * 3_600e9) throw new ConfigException(field, text, "at most a year");
        return Duration.ofNanos((long) nanos);
    }

    /** Go's spelling back, for --help and /configz. */
    public static String format(Duration d) {
        if (d.isZero()) return "0s";
        long ms = d.toMillis();
        if (ms < 1000) return ms + "ms";
        long s = d.getSeconds();
        StringBuilder b = new StringBuilder();
        if (s >= 3600) b.append(s / 3600).append('h');
        if (s >= 60) b.append((s % 3600) / 60).append('m');
        b.append(s % 60);
        int frac = d.getNano() / 1_000_000;
        if (frac > 0) b.append('.').append(String.format("%03d", frac).replaceAll("0+$", ""));
        return b.append('s').toString();
    }
}
