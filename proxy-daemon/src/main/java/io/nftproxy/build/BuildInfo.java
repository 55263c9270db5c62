package io.nftproxy.build;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * What this jar was built from: the version, the git commit ("unknown" when built outside a checkout) and the
 * build time, as the build wrote them into build-info.properties. For --version, the start line and a metric.
 */
public record BuildInfo(String version, String commit, String date) {
    private static final BuildInfo CURRENT = load();

    public static BuildInfo current() { return CURRENT; }

    /** {@code 0.1.0 (commit 1a2b3c4d5e6f, built 2026-12-03T09:00:00Z)}. */
    @Override public String toString() { return version + " (commit " + commit + ", built " + date + ")"; }

    private static BuildInfo load() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream("build-info.properties")) {
            if (in == null) throw new IllegalStateException("build-info.properties is missing from the build");
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new BuildInfo(p.getProperty("version"), p.getProperty("commit"), p.getProperty("date"));
    }
}
