package io.nftproxy.source.api;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLHandshakeException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.http.HttpConnectTimeoutException;
import java.security.cert.CertPathBuilderException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What an API failure is called, how long the daemon waits before the next try, and that an outage of any length is
 * a WARN per change of cause and one INFO when it ends. The refused port and the name that does not resolve are
 * met through the JDK's HTTP client itself, as the watches meet them; the rest are the exception chains it throws.
 */
class ApiReachabilityTest {
    private static final String URL = "https://192.0.2.10:6443";
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private AbstractAppender appender;

    @BeforeEach
    void capture() {
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        appender = new AbstractAppender("capture", null, null, true, Property.EMPTY_ARRAY) {
            @Override public void append(LogEvent e) { lines.add(e.getLevel() + " " + e.getMessage().getFormattedMessage()); }
        };
        appender.start();
        LoggerConfig lc = new LoggerConfig(ApiReachability.class.getName(), Level.INFO, false);
        lc.addAppender(appender, Level.INFO, null);
        ctx.getConfiguration().addLogger(ApiReachability.class.getName(), lc);
        ctx.updateLoggers();
    }

    @AfterEach
    void release() {
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        ctx.getConfiguration().removeLogger(ApiReachability.class.getName());
        ctx.updateLoggers();
        appender.stop();
    }

    private static ApiServer.Failure getFrom(String url) throws Exception {
        ApiServer api = ApiServer.of(new ConfigBuilder(Config.empty()).withMasterUrl(url).build());
        try {
            api.get("version", Duration.ofSeconds(5), Duration.ofSeconds(5)).body().close();
        } catch (IOException e) {
            return ApiServer.failure(e);
        }
        throw new AssertionError("something answered at " + url);
    }

    @Test
    void aRefusedPortIsUnreachableDefiniteAndRetriedSoon() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        ApiServer.Failure f = getFrom("http://127.0.0.1:" + port);
        assertEquals(ApiServer.UNREACHABLE, f.category(), f.toString());
        assertTrue(f.detail().startsWith("connection refused or unreachable"), f.detail());
        assertTrue(f.definite(), "a one-shot command fails at once");
        assertEquals(Duration.ofSeconds(2), ListWatch.backoffCap(f));
    }

    @Test
    void aNameThatDoesNotResolveIsADnsFailureNotARefusal() throws Exception {
        ApiServer.Failure f = getFrom("http://nftp-no-such-host.invalid:6443");
        assertEquals(ApiServer.UNRESOLVABLE, f.category(), f.toString());
        assertTrue(f.detail().startsWith("DNS failure: the server's host name does not resolve"), f.detail());
        assertFalse(f.detail().contains("refused"), f.detail());
        assertTrue(f.definite());
        assertEquals(Duration.ofSeconds(2), ListWatch.backoffCap(f));
    }

    @Test
    void aConnectTimeoutIsNotDefiniteButNeverReachedTheServer() {
        HttpConnectTimeoutException e = new HttpConnectTimeoutException("HTTP connect timed out");
        e.initCause(new ConnectException("HTTP connect timed out"));
        ApiServer.Failure f = ApiServer.failure(e);
        assertEquals(ApiServer.NO_CONNECT, f.category(), f.toString());
        assertTrue(f.detail().startsWith("connect timed out"), f.detail());
        assertFalse(f.definite(), "a one-shot command waits for its timeout");
        assertEquals(Duration.ofSeconds(2), ListWatch.backoffCap(f));
    }

    @Test
    void anUntrustedCertificateIsDefiniteAndSparesTheServer() {
        SSLHandshakeException e = new SSLHandshakeException("PKIX path building failed");
        e.initCause(new CertPathBuilderException("unable to find valid certification path to requested target"));
        ApiServer.Failure f = ApiServer.failure(new IOException("the client's wrapper", e));
        assertEquals(ApiServer.UNTRUSTED, f.category(), f.toString());
        assertTrue(f.detail().contains("not trusted by the configured CA") && f.detail().contains("certification path"), f.detail());
        assertTrue(f.definite());
        assertEquals(Duration.ofSeconds(30), ListWatch.backoffCap(f));
    }

    @Test
    void answersFromTheServerAreRetriedSlowlyAndNoneIsDefinite() {
        // 403 included: a restarting API server refuses kube-proxy's user until its RBAC is loaded.
        for (int code : new int[] {401, 403, 429, 500, 503}) {
            ApiServer.Failure f = new ApiServer.Failure("HTTP " + code, "HTTP " + code + ": busy");
            assertFalse(f.definite(), f.toString());
            assertEquals(Duration.ofSeconds(30), ListWatch.backoffCap(f));
        }
    }

    @Test
    void anOutageIsOneWarnPerChangeOfCauseAndOneInfoAtItsEnd() {
        ApiReachability r = new ApiReachability(URL, "the kernel table stays as it is");
        ApiServer.Failure refused = new ApiServer.Failure(ApiServer.UNREACHABLE, "connection refused or unreachable (Connection refused)");
        ApiServer.Failure reset = new ApiServer.Failure(ApiServer.UNREACHABLE, "connection refused or unreachable (Connection reset)");
        ApiServer.Failure dns = new ApiServer.Failure(ApiServer.UNRESOLVABLE, "DNS failure: the server's host name does not resolve");
        List<String> kinds = List.of("Service", "EndpointSlice", "Node", "ServiceCIDR");
        for (int retry = 0; retry < 50; retry++) {
            for (String k : kinds) r.failed(k, "list", retry % 2 == 0 ? refused : reset, null);
        }
        assertEquals(1, lines.size(), "50 rounds of retries by 4 kinds, refused or reset: " + lines);
        assertTrue(lines.get(0).startsWith("WARN API server unusable url=" + URL + " kind=Service during=list "
                + "cause=\"connection refused or unreachable (Connection refused)\"; retrying with backoff up to 2 s"), lines.get(0));
        assertEquals("API server " + URL + " unusable: connection refused or unreachable (Connection reset)", r.describe());

        for (String k : kinds) r.failed(k, "list", dns, null);
        for (String k : kinds) r.failed(k, "list", dns, null);
        assertEquals(2, lines.size(), lines.toString());
        assertTrue(lines.get(1).contains("cause=\"DNS failure: the server's host name does not resolve\""), lines.get(1));

        for (String k : kinds) r.failed(k, "list", refused, null);
        assertEquals(3, lines.size(), "back to refused is a change again: " + lines);

        for (String k : kinds) r.ok(k);
        for (String k : kinds) r.ok(k);
        assertEquals(4, lines.size(), lines.toString());
        assertEquals("INFO API server usable again url=" + URL + " (was: unreachable)", lines.get(3));
        assertNull(r.describe(), "nothing to report once every kind works");
        assertTrue(r.problems().isEmpty());
    }

    @Test
    void aOneShotCommandLogsOnlyWhatItWaitsOut() {
        ApiReachability r = ApiReachability.oneShot(URL, "for at most 60 s (--request-timeout), then the command fails");
        r.failed("Service", "list", new ApiServer.Failure(ApiServer.UNREACHABLE, "connection refused or unreachable"), null);
        assertEquals(List.of(), lines, "the command fails at once on a refusal and says so itself");
        assertTrue(r.failures().get("Service").definite());
        r.failed("Service", "list", new ApiServer.Failure("HTTP 503", "HTTP 503: busy"), null);
        assertEquals(1, lines.size(), lines.toString());
        assertTrue(lines.get(0).contains("cause=\"HTTP 503: busy\"; retrying with backoff up to 30 s, for at most 60 s"), lines.get(0));
    }

    @Test
    void theFirstKindThroughWakesTheOthersFromTheirBackoff() throws Exception {
        ApiReachability r = new ApiReachability(URL, "");
        r.failed("Service", "list", new ApiServer.Failure(ApiServer.UNREACHABLE, "refused"), null);
        r.failed("Node", "list", new ApiServer.Failure(ApiServer.UNREACHABLE, "refused"), null);
        long[] waited = new long[1];
        Thread waiting = new Thread(() -> {
            long t0 = System.nanoTime();
            try {
                r.pause(20_000);
            } catch (InterruptedException e) {
                return;
            }
            waited[0] = (System.nanoTime() - t0) / 1_000_000;
        });
        waiting.start();
        Thread.sleep(300);
        r.ok("Service");
        waiting.join(10_000);
        assertFalse(waiting.isAlive(), "still waiting");
        assertTrue(waited[0] < 5_000, "woke after " + waited[0] + " ms of 20,000");
    }
}
