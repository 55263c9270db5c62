package io.nftproxy.it.api;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real etcd and kube-apiserver on 127.0.0.1, on free ports, with all state in a temp directory that
 * {@link #close()} deletes. Authentication is a static token file: an admin in {@code system:masters}, and
 * {@code system:kube-proxy}, whom the API server's bootstrap RBAC policy binds to {@code system:node-proxier} (the
 * permissions a real kube-proxy has). Authorization is RBAC, so a daemon test with the proxy kubeconfig sees the
 * same 403s it would on a cluster.
 *
 * <p>The API server can be stopped and started again on the same port while etcd keeps the data, and etcd can be
 * compacted, so tests can force watch restarts and "too old resource version" (410) relists. The API server's watch
 * cache answers most watches from memory, so a compaction alone reaches an informer only once the watch cache has
 * also moved past its resource version; start with {@code --watch-cache=false} in {@link Options#extraApiServerArgs}
 * to make every watch and list go to etcd.
 *
 * <pre>{@code
 * try (ApiServerProcess api = ApiServerProcess.start(ApiServerBinaries.locateOrBuild(), Options.defaults())) {
 *     KubernetesClient client = new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(api.adminKubeconfig().toFile())).build();
 * }
 * }</pre>
 */
public final class ApiServerProcess implements AutoCloseable {
    /** The user the bootstrap policy binds to ClusterRole {@code system:node-proxier}. */
    public static final String PROXY_USER = "system:kube-proxy";
    public static final String ADMIN_USER = "nftproxy-test-admin";
    /** Loopback-only server: these are only the ranges it allocates ClusterIPs from. */
    public static final String SERVICE_CLUSTER_IP_RANGE = "10.96.0.0/12";
    private static final int START_ATTEMPTS = 3;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Pattern ETCD_REVISION = Pattern.compile("\"revision\":\"?(\\d+)\"?");

    /**
     * @param extraApiServerArgs appended to the API server's command line (later flags win)
     * @param readyTimeout how long etcd and then the API server each get to report ready; startup takes 5-20 s on a
     *     busy 2-core machine, most of it the API server's post-start hooks
     */
    public record Options(List<String> extraApiServerArgs, Duration readyTimeout) {
        public Options {
            extraApiServerArgs = List.copyOf(extraApiServerArgs);
        }

        public static Options defaults() { return new Options(List.of(), Duration.ofSeconds(120)); }

        public Options withApiServerArgs(String... args) {
            List<String> all = new ArrayList<>(extraApiServerArgs);
            all.addAll(List.of(args));
            return new Options(all, readyTimeout);
        }
    }

    private final ApiServerBinaries binaries;
    private final Options options;
    private final Path dir;
    private final LoopbackCertificates certs;
    private final int etcdClientPort;
    private final int etcdPeerPort;
    private final int securePort;
    private final String adminToken;
    private final String proxyToken;
    private final HttpClient https;
    private final HttpClient http;
    private final Thread shutdownHook;
    private Process etcd;
    private Process apiServer;
    private boolean closed;

    private ApiServerProcess(ApiServerBinaries binaries, Options options, Path dir) throws IOException {
        this.binaries = binaries;
        this.options = options;
        this.dir = dir;
        this.certs = LoopbackCertificates.generate(dir.resolve("pki"));
        Set<Integer> taken = new HashSet<>();
        this.etcdClientPort = freePort(taken);
        this.etcdPeerPort = freePort(taken);
        this.securePort = freePort(taken);
        this.adminToken = randomToken();
        this.proxyToken = randomToken();
        this.https = HttpClient.newBuilder().sslContext(certs.clientContext()).version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
        // A JVM that dies mid-test (a timeout, ctrl-C) must not leave an API server and etcd running.
        this.shutdownHook = new Thread(this::destroyAll, "apiserver-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Starts etcd, then the API server, and returns once {@code /readyz} answers 200. A port taken by someone else
     * between choosing and binding it costs one more attempt on fresh ports.
     */
    public static ApiServerProcess start(ApiServerBinaries binaries, Options options) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return startOnce(binaries, options);
            } catch (IOException e) {
                if (attempt == START_ATTEMPTS || !String.valueOf(e.getMessage()).contains("address already in use")) throw e;
            }
        }
    }

    private static ApiServerProcess startOnce(ApiServerBinaries binaries, Options options) throws IOException {
        Path dir = Files.createTempDirectory("nftp-apiserver-");
        ApiServerProcess p = null;
        try {
            p = new ApiServerProcess(binaries, options, dir);
            p.writeAuthFiles();
            p.startEtcd();
            p.startApiServer();
            return p;
        } catch (IOException | RuntimeException e) {
            if (p != null) p.close();
            else deleteTree(dir);
            throw e;
        }
    }

    public URI url() { return URI.create("https://127.0.0.1:" + securePort); }

    /** Kubeconfig of a {@code system:masters} user. */
    public Path adminKubeconfig() { return dir.resolve("admin.kubeconfig"); }

    /** Kubeconfig of {@code system:kube-proxy}: list/watch Services, EndpointSlices, Nodes; no writes. */
    public Path proxyKubeconfig() { return dir.resolve("kube-proxy.kubeconfig"); }

    public Path caCertificate() { return certs.caCert(); }

    /** The key the API server checks service account tokens with, for a controller manager that signs them. */
    public Path serviceAccountKey() { return certs.serviceAccountKey(); }

    public LoopbackCertificates certificates() { return certs; }

    public String adminToken() { return adminToken; }

    public URI etcdUrl() { return URI.create("http://127.0.0.1:" + etcdClientPort); }

    public boolean apiServerRunning() { return apiServer != null && apiServer.isAlive(); }

    /** The running kube-apiserver's process id (for its CPU and memory in /proc), or -1. */
    public synchronized long apiServerPid() { return apiServer == null ? -1 : apiServer.pid(); }

    /** SIGTERM, then a bounded wait; etcd and every stored object stay. Clients see connection refused until restart. */
    public synchronized void stopApiServer() throws IOException {
        stop(apiServer, "kube-apiserver");
        apiServer = null;
    }

    /** SIGKILL, as a crash or an OOM kill: no graceful shutdown, open connections reset; etcd keeps the data. */
    public synchronized void killApiServer() throws IOException {
        Process p = apiServer;
        apiServer = null;
        if (p == null) return;
        p.destroyForcibly();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) throw new IOException("kube-apiserver (pid " + p.pid() + ") survived SIGKILL");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted killing kube-apiserver", e);
        }
    }

    /** Starts the API server (again) on the same port, against the same etcd, and waits for {@code /readyz}. */
    public synchronized void startApiServer() throws IOException {
        if (closed) throw new IllegalStateException("closed");
        if (apiServerRunning()) throw new IllegalStateException("kube-apiserver is already running");
        List<String> cmd = new ArrayList<>(List.of(binaries.kubeApiServer().toString(),
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                "--secure-port=" + securePort,
                "--etcd-servers=" + etcdUrl(),
                "--tls-cert-file=" + certs.serverCert(),
                "--tls-private-key-file=" + certs.serverKey(),
                "--client-ca-file=" + certs.caCert(),
                "--cert-dir=" + dir.resolve("apiserver-certs"),
                "--token-auth-file=" + dir.resolve("tokens.csv"),
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file=" + certs.serviceAccountPublicKey(),
                "--service-account-signing-key-file=" + certs.serviceAccountKey(),
                "--service-cluster-ip-range=" + SERVICE_CLUSTER_IP_RANGE,
                // The lease reconciler would try to publish 127.0.0.1 as the kubernetes Service's endpoint, which
                // validation rejects (loopback); nothing here needs that Service to have endpoints.
                "--endpoint-reconciler-type=none",
                // Only what creating Services and EndpointSlices touches; the rest need controllers we do not run.
                "--enable-admission-plugins=NamespaceLifecycle",
                "--disable-admission-plugins=ServiceAccount,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,"
                        + "ValidatingAdmissionPolicy,ResourceQuota,LimitRanger",
                "--profiling=false"));
        cmd.addAll(options.extraApiServerArgs());
        apiServer = launch(cmd, dir.resolve("kube-apiserver.log"));
        awaitReady(apiServer, "kube-apiserver", dir.resolve("kube-apiserver.log"), this::apiServerReady);
    }

    public void restartApiServer() throws IOException {
        stopApiServer();
        startApiServer();
    }

    /** etcd's current store revision, the resource version of the newest write. */
    public long etcdRevision() throws IOException {
        String key = Base64.getEncoder().encodeToString("/registry/".getBytes(StandardCharsets.UTF_8));
        String body = etcdPost("/v3/kv/range", "{\"key\":\"" + key + "\",\"count_only\":true}");
        Matcher m = ETCD_REVISION.matcher(body);
        if (!m.find()) throw new IOException("no revision in etcd's range answer: " + body);
        return Long.parseLong(m.group(1));
    }

    /**
     * Compacts etcd's history up to its current revision, physically: every resource version older than the result
     * is gone, so a list or watch asking etcd for one gets 410 Gone.
     */
    public long compactEtcd() throws IOException {
        long revision = etcdRevision();
        etcdPost("/v3/kv/compaction", "{\"revision\":\"" + revision + "\",\"physical\":true}");
        return revision;
    }

    /** The last {@code lines} lines of the API server's log, for failure messages. */
    public String apiServerLogTail(int lines) { return tail(dir.resolve("kube-apiserver.log"), lines); }

    /** Stops both processes and deletes the directory with the keys, tokens and etcd data. Safe to call twice. */
    @Override
    public synchronized void close() throws IOException {
        if (closed) return;
        closed = true;
        try {
            stop(apiServer, "kube-apiserver");
            stop(etcd, "etcd");
        } finally {
            apiServer = null;
            etcd = null;
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException alreadyShuttingDown) {
                // the hook is running or about to; it only destroys processes that are already gone
            }
            deleteTree(dir);
        }
    }

    private void writeAuthFiles() throws IOException {
        Files.writeString(dir.resolve("tokens.csv"),
                adminToken + "," + ADMIN_USER + ",uid-admin,\"system:masters\"\n"
                        + proxyToken + "," + PROXY_USER + ",uid-kube-proxy\n");
        Files.writeString(adminKubeconfig(), kubeconfig(ADMIN_USER, adminToken));
        Files.writeString(proxyKubeconfig(), kubeconfig("kube-proxy", proxyToken));
    }

    private String kubeconfig(String user, String token) {
        return "apiVersion: v1\n"
                + "kind: Config\n"
                + "clusters:\n"
                + "- name: nftproxy-test\n"
                + "  cluster:\n"
                + "    server: " + url() + "\n"
                + "    certificate-authority: " + certs.caCert() + "\n"
                + "users:\n"
                + "- name: " + user + "\n"
                + "  user:\n"
                + "    token: " + token + "\n"
                + "contexts:\n"
                + "- name: " + user + "\n"
                + "  context:\n"
                + "    cluster: nftproxy-test\n"
                + "    user: " + user + "\n"
                + "current-context: " + user + "\n";
    }

    private void startEtcd() throws IOException {
        String client = "http://127.0.0.1:" + etcdClientPort;
        String peer = "http://127.0.0.1:" + etcdPeerPort;
        // etcd creates its data dir itself with mode 0700; it refuses a pre-made one that is more open.
        etcd = launch(List.of(binaries.etcd().toString(),
                "--name=nftp-test",
                "--data-dir=" + dir.resolve("etcd-data"),
                "--listen-client-urls=" + client,
                "--advertise-client-urls=" + client,
                "--listen-peer-urls=" + peer,
                "--initial-advertise-peer-urls=" + peer,
                "--initial-cluster=nftp-test=" + peer,
                // Test data is thrown away; fsync would make every write wait for a shared disk.
                "--unsafe-no-fsync=true",
                "--log-level=warn"), dir.resolve("etcd.log"));
        awaitReady(etcd, "etcd", dir.resolve("etcd.log"), this::etcdReady);
    }

    private boolean etcdReady() {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(etcdUrl().resolve("/health"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 && r.body().contains("\"health\":\"true\"");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private boolean apiServerReady() {
        try {
            HttpResponse<String> r = https.send(HttpRequest.newBuilder(url().resolve("/readyz"))
                    .header("Authorization", "Bearer " + adminToken)
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** POSTs {@code json} to etcd's v3 JSON gateway at {@code path}; an answer other than 200 is an IOException. */
    String etcdPost(String path, String json) throws IOException {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(etcdUrl().resolve(path))
                    .timeout(Duration.ofSeconds(30))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) throw new IOException("etcd " + path + " answered " + r.statusCode() + ": " + r.body());
            return r.body();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted calling etcd " + path, e);
        }
    }

    private interface Probe {
        boolean ready();
    }

    private void awaitReady(Process p, String what, Path log, Probe probe) throws IOException {
        long deadline = System.nanoTime() + options.readyTimeout().toNanos();
        while (!probe.ready()) {
            if (!p.isAlive()) {
                throw new IOException(what + " exited with code " + p.exitValue() + " before it was ready; last log lines:\n"
                        + tail(log, 40));
            }
            if (System.nanoTime() > deadline) {
                throw new IOException(what + " not ready after " + options.readyTimeout().toSeconds() + " s; last log lines:\n"
                        + tail(log, 40));
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted waiting for " + what, e);
            }
        }
    }

    private static Process launch(List<String> cmd, Path log) throws IOException {
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
    }

    private static void stop(Process p, String what) throws IOException {
        if (p == null || !p.isAlive()) return;
        p.destroy();
        try {
            // Both shut down in well under a second when idle; a busy machine gets some slack before SIGKILL.
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                if (!p.waitFor(10, TimeUnit.SECONDS)) throw new IOException(what + " (pid " + p.pid() + ") survived SIGKILL");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted stopping " + what, e);
        }
    }

    private void destroyAll() {
        Process a = apiServer;
        Process e = etcd;
        if (a != null) a.destroyForcibly();
        if (e != null) e.destroyForcibly();
    }

    /**
     * A free loopback port below the kernel's ephemeral range. Ports from {@code bind(0)} come from that range, where
     * any outgoing connection on this shared machine can take the port between our check and the server's bind
     * (seen here: "bind: address already in use"); below it only explicit binds compete.
     */
    private static int freePort(Set<Integer> taken) throws IOException {
        int ephemeralLow = ephemeralRangeStart();
        int low = Math.max(1024, ephemeralLow - 16_000);
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = low + RANDOM.nextInt(ephemeralLow - low);
            if (!taken.add(port)) continue;
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
                return port;
            } catch (IOException inUse) {
                // try another
            }
        }
        throw new IOException("no free loopback port in " + low + "-" + ephemeralLow);
    }

    private static int ephemeralRangeStart() {
        try {
            String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).strip();
            int start = Integer.parseInt(range.split("\\s+")[0]);
            return start > 4096 ? start : 32768;
        } catch (IOException | RuntimeException e) {
            return 32768;
        }
    }

    private static String randomToken() {
        byte[] b = new byte[24];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    private static String tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) return;
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
