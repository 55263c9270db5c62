package io.nftproxy.it.diff;

import io.nftproxy.it.api.ApiRelay;
import io.nftproxy.it.api.ApiServerProcess;
import io.nftproxy.it.api.NamespaceHttp;
import io.nftproxy.it.daemon.DaemonProcess;
import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;
import io.nftproxy.random.NodeSettings;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One proxy as a process in a fresh network namespace of its own: the node's addresses on an interface, the API
 * server reached through a relay on the namespace's loopback (no link leaves the namespace), and the shared
 * configuration file. Closing it stops the proxy and deletes the namespace with its table.
 */
final class ProxyUnderTest implements AutoCloseable {
    private static final int HEALTHZ = 10256;
    private static final int METRICS = 10249;
    /** Reads of the table this far apart must agree before the table counts as the proxy's answer. */
    private static final Duration SETTLE = Duration.ofMillis(1500);

    private final String name;
    private final KernelNamespace ns;
    private final NetnsThread inNs;
    private final ApiRelay relay;
    private final Path dir;
    private Process kubeProxy;
    private DaemonProcess nftproxy;
    /** A JVM that dies mid-test (a timeout, ctrl-C) must not leave a proxy running in a namespace. */
    private final Thread shutdownHook = new Thread(this::stopProcess, "diff-proxy-shutdown");

    private ProxyUnderTest(String name, KernelNamespace ns, NetnsThread inNs, ApiRelay relay, Path dir) {
        this.name = name;
        this.ns = ns;
        this.inNs = inNs;
        this.relay = relay;
        this.dir = dir;
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** kube-proxy, {@code binary}, reading the configuration file. */
    static ProxyUnderTest kubeProxy(Path binary, ApiServerProcess api, NodeSettings node) throws Exception {
        ProxyUnderTest p = prepare("kube-proxy", api, node);
        try {
            List<String> argv = new ArrayList<>(List.of("ip", "netns", "exec", p.ns.name(), binary.toString(),
                    "--config", p.dir.resolve("config.yaml").toString(), "--v=2"));
            p.kubeProxy = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(p.dir.resolve("log").toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            return p;
        } catch (IOException | RuntimeException e) {
            p.close();
            throw e;
        }
    }

    /** {@code nftproxy run} with the same file and {@code --table-layout layout} (the default when empty). */
    static ProxyUnderTest nftproxy(String layout, ApiServerProcess api, NodeSettings node) throws Exception {
        ProxyUnderTest p = prepare("nftproxy" + (layout.isEmpty() ? "" : "-" + layout), api, node);
        try {
            List<String> args = new ArrayList<>(List.of("--config", p.dir.resolve("config.yaml").toString()));
            if (!layout.isEmpty()) args.addAll(List.of("--table-layout", layout));
            p.nftproxy = DaemonProcess.start(p.ns, a -> a, Map.of(), args.toArray(String[]::new));
            return p;
        } catch (IOException | RuntimeException e) {
            p.close();
            throw e;
        }
    }

    private static ProxyUnderTest prepare(String name, ApiServerProcess api, NodeSettings node) throws Exception {
        KernelNamespace ns = KernelNamespace.create("diff");
        NetnsThread in = null;
        ApiRelay relay = null;
        try {
            ns.ip("link", "set", "lo", "up");
            // A veth pair with both ends in the namespace: an interface to hold the node's addresses (this kernel
            // has no dummy interfaces), linked to nothing outside.
            ns.ip("link", "add", "eth0", "type", "veth", "peer", "name", "eth1");
            for (String a : node.interfaceAddresses()) ns.ip("addr", "add", a, "dev", "eth0", "nodad");
            ns.ip("link", "set", "eth0", "up");
            ns.ip("link", "set", "eth1", "up");
            in = NetnsThread.start(ns.handle());
            ServerSocket listener = in.call(() -> new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
            relay = new ApiRelay(api.url(), listener);
            Path dir = Files.createTempDirectory("nftp-diff-" + name + "-");
            Path kubeconfig = dir.resolve("kubeconfig");
            Files.writeString(kubeconfig, Files.readString(api.proxyKubeconfig()).replace(api.url().toString(), relay.url().toString()));
            Files.writeString(dir.resolve("config.yaml"), node.configFile(kubeconfig, HEALTHZ, METRICS));
            return new ProxyUnderTest(name, ns, in, relay, dir);
        } catch (Exception e) {
            if (relay != null) relay.close();
            if (in != null) in.close();
            ns.close();
            throw e;
        }
    }

    String name() { return name; }

    /**
     * Waits until the proxy has synced the cluster (kube-proxy: its sync metric has a timestamp; nftproxy: its log
     * says the first sync is done) and its tables then read the same twice in a row; returns the tables as nft
     * lists them, by family (a family the node has no address of may have none).
     */
    Map<IpFamily, String> awaitTables(Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!synced()) {
            if (!alive()) throw new AssertionError(name + " exited before its first sync:\n" + logTail());
            if (System.nanoTime() > deadline) throw new AssertionError(name + " did not sync within " + limit.toSeconds() + " s:\n" + logTail());
            Thread.sleep(200);
        }
        Map<IpFamily, String> last = tables();
        while (true) {
            Thread.sleep(SETTLE.toMillis());
            Map<IpFamily, String> now = tables();
            if (now.equals(last)) return now;
            if (System.nanoTime() > deadline) throw new AssertionError(name + "'s table was still changing after " + limit.toSeconds() + " s");
            last = now;
        }
    }

    private boolean synced() throws Exception {
        if (nftproxy != null) return nftproxy.log().contains("first sync done");
        // One gauge per family kube-proxy runs ({ip_family="IPv4"}), zero until that family's first sync.
        try {
            NamespaceHttp.Answer a = NamespaceHttp.get(inNs, METRICS, "/metrics");
            List<String> gauges = a.body().lines().filter(l -> l.startsWith("kubeproxy_sync_proxy_rules_last_timestamp_seconds")).toList();
            return a.status() == 200 && !gauges.isEmpty()
                    && gauges.stream().allMatch(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1).strip()) > 0);
        } catch (Exception notYet) {
            return false;
        }
    }

    private Map<IpFamily, String> tables() throws IOException {
        Map<IpFamily, String> out = new EnumMap<>(IpFamily.class);
        for (IpFamily f : IpFamily.values()) {
            KernelNamespace.Result r = ns.exec(Duration.ofSeconds(60), null, "nft", "-j", "list", "table", f.nftFamily(), "kube-proxy");
            if (r.ok()) out.put(f, r.stdout());
        }
        return out;
    }

    private boolean alive() { return kubeProxy != null ? kubeProxy.isAlive() : nftproxy.alive(); }

    String logTail() {
        String log;
        if (nftproxy != null) {
            log = nftproxy.log();
        } else {
            try {
                log = Files.readString(dir.resolve("log"), StandardCharsets.UTF_8);
            } catch (IOException e) {
                log = e.toString();
            }
        }
        List<String> lines = log.lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    /** kube-proxy's log, for the lines it logs about what it could not program; empty for nftproxy. */
    Optional<String> kubeProxyLog() throws IOException {
        return kubeProxy == null ? Optional.empty() : Optional.of(Files.readString(dir.resolve("log"), StandardCharsets.UTF_8));
    }

    private void stopProcess() {
        if (kubeProxy != null) {
            kubeProxy.destroy();
            try {
                if (!kubeProxy.waitFor(20, TimeUnit.SECONDS)) kubeProxy.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (nftproxy != null) {
            try {
                nftproxy.close();
            } catch (IOException e) {
                // only its log file was left behind
            }
        }
    }

    @Override public void close() throws IOException {
        try {
            stopProcess();
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } finally {
            try {
                relay.close();
                inNs.close();
            } finally {
                ns.close();
                try (var files = Files.list(dir)) {
                    for (Path f : files.toList()) Files.deleteIfExists(f);
                }
                Files.deleteIfExists(dir);
            }
        }
    }
}
