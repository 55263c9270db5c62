package io.nftproxy.config;

import io.nftproxy.logging.LogSettings;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpPrefix;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What --write-config-to writes reads back, through the same ConfigFile as --config, to the same configuration. */
class ConfigDocumentTest {
    @TempDir Path dir;

    private ProxyConfig roundTrip(ProxyConfig c) throws Exception {
        Path f = dir.resolve("written.yaml");
        Files.writeString(f, ConfigDocument.yaml(c));
        ConfigFileTest.Read r = ConfigFileTest.read(f);
        assertEquals(List.of(), r.notes().stream().filter(n -> n.level() == org.slf4j.event.Level.WARN).toList());
        return r.config();
    }

    @Test
    void theDefaultsReadBackAsThemselves() throws Exception {
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = "k8s-node-1";
        ProxyConfig c = b.build();
        assertEquals(c, roundTrip(c));
    }

    @Test
    void everyFieldTheFileCanSayReadsBackTheSame() throws Exception {
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = "k8s-node-1";
        b.clusterCidrs = List.of(IpPrefix.parse("10.244.0.0/16"), IpPrefix.parse("fd00:10:244::/56"));
        b.nodePortAddresses = new NodePortAddresses(false, List.of(IpPrefix.parse("192.168.10.0/24"), IpPrefix.parse("fd00:192:168:10::/64")));
        b.masqueradeAll = true;
        b.masqueradeBit = 3;
        b.healthzBindAddress = new InetSocketAddress("::", 10266);
        b.metricsBindAddress = new InetSocketAddress("127.0.0.1", 0);
        b.minSyncPeriod = Duration.ofMillis(250);
        b.syncPeriod = Duration.ofSeconds(45);
        b.configSyncPeriod = Duration.ofMinutes(20);
        b.kubeconfig = Path.of("/etc/nftproxy/kubeconfig");
        b.logging = new LogSettings(4, LogSettings.Format.JSON);
        b.conntrack = new ConntrackSettings(0, 1000, Duration.ofHours(2), Duration.ZERO, true, Duration.ofSeconds(45), Duration.ofMinutes(3));
        b.detectLocal = new LocalDetection("InterfaceNamePrefix", "cbr0", "veth");
        b.bindAddress = IpAddress.parse("192.168.10.20");
        b.tableLayout = io.nftproxy.render.TableLayout.UPSTREAM;
        b.refuseExternalIPOverlaps = true;
        ProxyConfig c = b.build().validate();
        assertEquals(c, roundTrip(c));
    }

    @Test
    void flagsWithoutAFieldAreNamedInAComment() {
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.manifests = Path.of("/srv/manifests");
        b.nftMode = io.nftproxy.netlink.nft.NftClients.Mode.EXEC;
        String yaml = ConfigDocument.yaml(b.build());
        assertTrue(yaml.contains("# Not in a KubeProxyConfiguration, give it as a flag: --manifests /srv/manifests"), yaml);
        assertTrue(yaml.contains("# Not in a KubeProxyConfiguration, give it as a flag: --nft-mode exec"), yaml);
    }
}
