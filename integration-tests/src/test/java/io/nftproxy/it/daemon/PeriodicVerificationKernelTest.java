package io.nftproxy.it.daemon;

import io.nftproxy.config.ProxyConfig;
import io.nftproxy.daemon.ProxyDaemon;
import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.netlink.monitor.OwnProcesses;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.source.ManifestDirectorySource;
import io.nftproxy.systemd.SdNotify;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The daemon's periodic verification on a real kernel, with a full-sync period of 2 s: while nobody else commits, it
 * is proven by the ruleset generation (read through the daemon's own nfnetlink socket in the namespace) and counted as
 * {@code path="generation"}; after someone else committed to another table in the namespace, the nftables monitor's
 * ledger proves it ({@code path="monitor"}) and nothing is read back. (The read-back path, taken when neither proves
 * it, is TableVerificationKernelTest's, which runs without a monitor.)
 */
class PeriodicVerificationKernelTest {
    private static final Pattern COUNT = Pattern.compile(
            "nftproxy_table_verifications_total\\{ip_family=\"IPv4\",path=\"(generation|monitor|read_back)\"} ([0-9.]+)");

    @TempDir Path dir;

    @Test
    void provenByGenerationWhileQuietAndByTheMonitorAfterSomeoneCommittedElsewhere() throws Exception {
        KernelTests.assumeAvailable();
        ExampleManifests.copyTo(dir);
        try (KernelNamespace ns = KernelNamespace.create("pver")) {
            ns.ip("link", "set", "lo", "up");
            ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
            b.hostnameOverride = "k8s-node-1";
            b.clusterCidrs = List.of(IpPrefix.parse("172.20.0.0/16"));
            b.manifests = dir;
            // Port 0 turns a server off; an in-process daemon's servers listen in this JVM's namespace, as DaemonKernelTest's.
            b.healthzBindAddress = new InetSocketAddress("127.0.0.1", ExampleManifests.freePort());
            InetSocketAddress metrics = new InetSocketAddress("127.0.0.1", ExampleManifests.freePort());
            b.metricsBindAddress = metrics;
            b.syncPeriod = Duration.ofSeconds(1);
            b.minSyncPeriod = Duration.ofMillis(100);
            b.convergePeriod = Duration.ofSeconds(2);
            ProxyConfig config = b.build().validate();
            OwnProcesses own = OwnProcesses.thisProcess();
            NftClient client = NftClients.createInNamespace(NftClients.Mode.AUTO, ns.handle(), own::registerChild).client();
            try (ProxyDaemon daemon = new ProxyDaemon(new ProxyDaemon.Options(config, io.nftproxy.daemon.NodeNetwork.namespace(ns.handle()),
                    true), client, own, new SdNotify(Map.of()), Clock.systemUTC())) {
                daemon.start(store -> new ManifestDirectorySource(dir, store, Duration.ofMillis(50)));
                assertTrue(daemon.awaitFirstSync(Duration.ofSeconds(30)), "first sync");
                assertTrue(waitFor(() -> count(metrics, "generation") >= 2, Duration.ofSeconds(20)),
                        "two verifications by generation while nobody commits: " + scrape(metrics));
                double readBacks = count(metrics, "read_back");
                ns.load("add table ip nftp-neighbour\nadd chain ip nftp-neighbour c\n");
                assertTrue(waitFor(() -> count(metrics, "monitor") >= 1, Duration.ofSeconds(20)),
                        "a commit to another table, seen by the monitor, proves the next verification: " + scrape(metrics));
                assertEquals(readBacks, count(metrics, "read_back"), "nothing read back: " + scrape(metrics));
                double generations = count(metrics, "generation");
                assertTrue(waitFor(() -> count(metrics, "generation") > generations, Duration.ofSeconds(20)),
                        "the trust moved on to the new generation, which proves the next one: " + scrape(metrics));
                assertEquals(readBacks, count(metrics, "read_back"), "still nothing read back: " + scrape(metrics));
            }
        }
    }

    private interface Condition { boolean holds() throws Exception; }

    private static boolean waitFor(Condition c, Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < deadline) {
            if (c.holds()) return true;
            Thread.sleep(200);
        }
        return c.holds();
    }

    private static double count(InetSocketAddress metrics, String path) throws Exception {
        Matcher m = COUNT.matcher(scrape(metrics));
        while (m.find()) if (m.group(1).equals(path)) return Double.parseDouble(m.group(2));
        return 0;
    }

    private static String scrape(InetSocketAddress metrics) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + metrics.getPort() + "/metrics")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        return r.body();
    }
}
