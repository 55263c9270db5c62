package io.nftproxy.source.api;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.internal.KubeConfigUtils;
import io.fabric8.kubernetes.client.internal.SSLUtils;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The connection to one kube-apiserver: its URL, credentials and TLS settings as a kubeconfig (or the pod's service
 * account) gives them, and plain GETs whose bodies are streamed as they arrive. Reading a kubeconfig, with its
 * relative paths, exec plugins and token files, is fabric8's {@link Config}; everything after that is the JDK's
 * {@link HttpClient} and our own code, so no object ever goes through a client-side model.
 *
 * <p>Every request goes over HTTP/1.1: each watch then has its own connection, and a connection that dies silently
 * takes one watch with it instead of all of them (HTTP/2 multiplexes them onto one). {@link #renew} starts a new
 * client, for when the old one's pooled connections are suspected dead.
 */
public final class ApiServer {
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

    /**
     * The clients' executor, shared by every client {@link #renew} makes: it only hands response bytes to the
     * watches' queues ({@link StreamBody} never blocks) and completes futures, so one thread does. The JDK's default
     * is a pool per client that grows a thread per concurrent response (the lists of every kind at a start).
     */
    private static final ExecutorService CALLBACKS = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "api-client");
        t.setDaemon(true);
        return t;
    });

    private volatile Config config;
    private final URI base;
    private volatile HttpClient http;
    /** The kubeconfig user's tokenFile (kubeadm's kube-proxy kubeconfig has one); fabric8 parses it but never sends it. */
    private final Path tokenFile;
    /** Where the URL and credentials came from, for the log and for every message about reaching the server. */
    private final String origin;

    private ApiServer(Config config, Path tokenFile, String origin) {
        this.config = Objects.requireNonNull(config);
        this.tokenFile = tokenFile;
        this.origin = origin;
        String url = config.getMasterUrl();
        this.base = URI.create(url.endsWith("/") ? url : url + "/");
        this.http = newClient(config);
    }

    /**
     * From a kubeconfig file (relative certificate paths resolve against its directory).
     *
     * @throws IllegalArgumentException the file cannot be read, does not parse, or its current context does not lead
     *                                  to a cluster with a server (the message names the file and what is missing)
     */
    public static ApiServer fromKubeconfig(Path kubeconfig) {
        String context = KubeconfigCheck.currentContext(kubeconfig);
        Config config;
        try {
            config = Config.fromKubeconfig(null, kubeconfig.toFile());
        } catch (RuntimeException e) {
            throw new KubeconfigCheck.KubeconfigException(kubeconfig, "cannot be used: "
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage().lines().findFirst().orElse("")));
        }
        return new ApiServer(config, tokenFileOf(kubeconfig), "kubeconfig " + kubeconfig + ", context " + context);
    }

    /** Why a kubeconfig cannot be used, without the file's name (the caller's message names it); else the message. */
    public static String reason(IllegalArgumentException e) {
        return e instanceof KubeconfigCheck.KubeconfigException k ? k.reason() : e.getMessage();
    }

    /** The current context's user's tokenFile, relative to the kubeconfig's directory as kubectl resolves it; or null. */
    private static Path tokenFileOf(Path kubeconfig) {
        io.fabric8.kubernetes.api.model.Config raw = KubeConfigUtils.parseConfig(kubeconfig.toFile());
        String context = raw.getCurrentContext();
        String user = raw.getContexts() == null ? null : raw.getContexts().stream()
                .filter(c -> Objects.equals(c.getName(), context) && c.getContext() != null)
                .map(c -> c.getContext().getUser()).findFirst().orElse(null);
        String file = user == null || raw.getUsers() == null ? null : raw.getUsers().stream()
                .filter(u -> user.equals(u.getName()) && u.getUser() != null)
                .map(u -> u.getUser().getTokenFile()).filter(t -> t != null && !t.isBlank()).findFirst().orElse(null);
        if (file == null) return null;
        Path dir = kubeconfig.toAbsolutePath().getParent();
        return dir == null ? Path.of(file) : dir.resolve(file);
    }

    /**
     * This connection's credentials and TLS settings at another URL: kube-proxy's {@code --master}, which replaces
     * the kubeconfig's server and keeps the rest.
     */
    public ApiServer at(URI server) {
        Config moved = new io.fabric8.kubernetes.client.ConfigBuilder(config).withMasterUrl(server.toString()).build();
        return new ApiServer(moved, tokenFile, origin + ", at --master " + server);
    }

    /**
     * Without --kubeconfig, as fabric8 looks: $KUBECONFIG (else ~/.kube/config) when it is a file, checked as
     * {@link #fromKubeconfig} checks one; else the pod's service account; {@link #origin()} says which.
     */
    public static ApiServer autoConfigured() {
        Path home = Path.of(System.getenv("HOME") != null ? System.getenv("HOME") : System.getProperty("user.home"));
        // fabric8 would pass over a kubeconfig whose current context leads nowhere to the in-cluster default URL.
        Path kubeconfig = AutoConfigOrigin.kubeconfig(System::getenv, home);
        if (Files.isRegularFile(kubeconfig)) KubeconfigCheck.currentContext(kubeconfig);
        return new ApiServer(Config.autoConfigure(null), null,
                AutoConfigOrigin.describe(System::getenv, home, AutoConfigOrigin.SERVICE_ACCOUNT));
    }

    public static ApiServer of(Config config) { return new ApiServer(config, null, "a configuration given in code"); }

    /**
     * Where the URL and credentials came from: {@code kubeconfig FILE, context NAME}, or, without --kubeconfig, which
     * of $KUBECONFIG, ~/.kube/config and the pod's environment and service-account files were found.
     */
    public String origin() { return origin; }

    /** The server's URL, as every log line about it names it. */
    public String url() { return base.toString().replaceAll("/$", ""); }

    /** Whether the configuration turned TLS verification off (insecure-skip-tls-verify). */
    public boolean insecure() { return config.isTrustCerts(); }

    /** A fresh HTTP client: the old one's pooled connections may be half-open. */
    public void renew() { http = newClient(config); }

    /** Re-reads the kubeconfig or service-account token (after a 401: a rotated token, an exec plugin's expiry). */
    public void refreshCredentials() {
        Config fresh = config.refresh();
        if (fresh != null) {
            config = fresh;
            http = newClient(fresh);
        }
    }

    /**
     * A GET of {@code pathAndQuery} (relative to the server's URL) whose response must begin within {@code headers};
     * the body streams while it arrives and fails a read that waits longer than {@code idle}.
     *
     * @throws IOException when the server cannot be reached, refuses, or its certificate is not trusted
     */
    public HttpResponse<InputStream> get(String pathAndQuery, Duration headers, Duration idle) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(pathAndQuery)).GET()
                .timeout(headers)
                .header("Accept", "application/json")
                .header("User-Agent", "nftproxy");
        String auth = authorization();
        if (auth != null) b.header("Authorization", auth);
        if (config.getImpersonateUsername() != null) b.header("Impersonate-User", config.getImpersonateUsername());
        if (config.getImpersonateGroups() != null) for (String g : config.getImpersonateGroups()) b.header("Impersonate-Group", g);
        return http.send(b.build(), info -> new StreamBody(idle));
    }

    /**
     * One GET of {@code /version}, bounded by {@code limit} as a whole (connect, TLS, response): {@code run --dry-run}
     * asks it to report on the server in seconds (the daemon itself never stops for it: its watches retry). Null when the
     * server answered (any status but 401, which means the kubeconfig's credentials are refused), else why not.
     */
    public Failure firstContact(Duration limit) throws InterruptedException {
        java.util.concurrent.CompletableFuture<Failure> f = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                HttpResponse<InputStream> r = get("version", limit, limit);
                r.body().close();   // the answer is all we wanted; a StreamBody's close never fails
                return r.statusCode() == 401 ? new Failure("unauthorized", "HTTP 401: the kubeconfig's credentials are refused") : null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Failure("interrupted", "interrupted");
            } catch (IOException | RuntimeException e) {
                return failure(e);
            }
        });
        try {
            return f.get(limit.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            f.cancel(true);
            return new Failure("silent", "no answer within " + limit.toSeconds() + " s (a firewall dropping packets, or "
                    + "a host that is down)");
        } catch (java.util.concurrent.ExecutionException e) {
            return failure(e.getCause());
        }
    }

    private String authorization() throws IOException {
        Config c = config;
        String token = c.getOauthTokenProvider() != null ? c.getOauthTokenProvider().getToken() : null;
        if (token == null) token = c.getOauthToken();
        if (token == null) token = c.getAutoOAuthToken();
        if (token == null && tokenFile != null) {
            // Read on every request, as client-go re-reads it: a projected service-account token is rotated in place.
            try {
                token = Files.readString(tokenFile, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IOException("the kubeconfig's tokenFile " + tokenFile + " cannot be read: " + e.getMessage(), e);
            }
        }
        if (token != null && !token.isBlank()) return "Bearer " + token.strip();
        if (c.getUsername() != null && c.getPassword() != null) {
            return "Basic " + Base64.getEncoder().encodeToString((c.getUsername() + ":" + c.getPassword()).getBytes(StandardCharsets.UTF_8));
        }
        return null;
    }

    private static HttpClient newClient(Config config) {
        HttpClient.Builder b = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER).executor(CALLBACKS);
        if (config.getMasterUrl().startsWith("https:")) {
            SSLContext tls = sslContext(config);
            b.sslContext(tls).sslParameters(chaChaFirst(tls));
        }
        return b.build();
    }

    /**
     * The context's default parameters with the ChaCha20-Poly1305 suites offered first, every other suite still
     * offered after them. The launcher runs the JIT's first tier only, which has no AES-GCM intrinsics: decrypting
     * the first lists took about 40 % of the daemon's CPU at a 45k start, and ChaCha20-Poly1305 costs about a
     * quarter of AES-GCM in plain Java (docs/benchmarks.md, issue 27). A Go server (the kube-apiserver) takes the
     * client's first choice when that is ChaCha20; a server that does not offer it negotiates as before.
     */
    static SSLParameters chaChaFirst(SSLContext tls) {
        SSLParameters p = tls.getDefaultSSLParameters();
        List<String> suites = new ArrayList<>(List.of(p.getCipherSuites()));
        suites.sort(Comparator.comparing(s -> !s.contains("_CHACHA20_")));
        p.setCipherSuites(suites.toArray(String[]::new));
        return p;
    }

    private static SSLContext sslContext(Config config) {
        try {
            return SSLUtils.sslContext(config);
        } catch (Exception e) {
            throw new IllegalArgumentException("the kubeconfig's TLS material cannot be used: " + failure(e).detail(), e);
        }
    }

    /**
     * A failure's category (what an operator does about it: the server is unreachable, its certificate is not
     * trusted, ...) and its detail. Retries that fail the same way in slightly different words share a category,
     * so the log does not repeat itself.
     */
    public record Failure(String category, String detail) {
        /** The categories for which the network or the server said no at once, rather than nothing. */
        private static final java.util.Set<String> DEFINITE = java.util.Set.of(UNREACHABLE, UNRESOLVABLE, UNTRUSTED);

        /**
         * The connection was refused, the name does not resolve or the certificate is not trusted: an answer that
         * waiting a few seconds does not change. A one-shot command fails at once on it; the daemon retries all the
         * same (the server may come up, the DNS record appear, the CA file be put right). Not 401/403: a restarting
         * API server answers 403 to kube-proxy's user for a moment before its RBAC is loaded (seen in
         * DaemonAgainstApiServerTest), so those are waited out like a 5xx.
         */
        public boolean definite() { return DEFINITE.contains(category); }

        /**
         * Nothing reached the server (refused, unreachable, no such name, no answer to the connect): retrying costs it
         * nothing, so the daemon retries these sooner than an answer from a server that is overloaded or refuses us.
         */
        public boolean beforeTheServer() { return BEFORE_THE_SERVER.contains(category); }

        private static final java.util.Set<String> BEFORE_THE_SERVER = java.util.Set.of(UNREACHABLE, UNRESOLVABLE, NO_CONNECT);
    }

    /** Refused, reset, no route, a failed TLS handshake: the server is not reached. */
    public static final String UNREACHABLE = "unreachable";
    /** Nothing answered the connection (a firewall dropping packets, a host that is down). */
    public static final String NO_CONNECT = "connect timeout";
    /** The server's host name does not resolve (DNS). */
    public static final String UNRESOLVABLE = "unresolvable";
    /** The server's certificate is not signed by the configured CA. */
    public static final String UNTRUSTED = "untrusted";

    /** The innermost cause, named for what it means (refused, untrusted certificate, ...), not the client's wrapper. */
    public static Failure failure(Throwable e) {
        Throwable t = e;
        boolean tls = false;
        boolean untrusted = false;
        boolean connectTimeout = false;
        Throwable dns = null;
        while (true) {
            if (t instanceof HttpConnectTimeoutException) connectTimeout = true;
            if (t instanceof SSLHandshakeException) tls = true;
            if (t instanceof CertPathBuilderException || t instanceof CertificateException) untrusted = true;
            // The JDK's client wraps a name that does not resolve in a ConnectException: look past it.
            if (t instanceof UnknownHostException || t instanceof UnresolvedAddressException) dns = t;
            if (t.getCause() == null || t.getCause() == t) break;
            t = t.getCause();
        }
        String msg = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        if (dns != null) {
            return new Failure(UNRESOLVABLE, "DNS failure: the server's host name does not resolve"
                    + (dns.getMessage() == null ? "" : " (" + dns.getMessage() + ")"));
        }
        if (untrusted) {
            return new Failure(UNTRUSTED, "TLS: the server's certificate is not trusted by the configured CA (" + msg + ")");
        }
        if (tls) return new Failure(UNREACHABLE, "TLS handshake failed (" + msg + ")");
        if (connectTimeout) return new Failure(NO_CONNECT, "connect timed out (nothing answered the connection)");
        if (t instanceof ConnectException || e instanceof ConnectException || t instanceof java.net.SocketException
                || (t instanceof IOException && msg.contains("Connection reset"))) {
            // The JDK's refused connect ends in a bare ClosedChannelException: its name says nothing more.
            return new Failure(UNREACHABLE,
                    "connection refused or unreachable" + (t.getMessage() == null ? "" : " (" + msg + ")"));
        }
        if (t instanceof HttpTimeoutException) return new Failure("silent", "no response in time");
        if (t instanceof StreamBody.IdleTimeoutException) return new Failure("silent", msg);
        String detail = t.getClass().getSimpleName() + ": " + msg;
        return new Failure(detail, detail);   // nothing known about it: its own category
    }
}
