package io.nftproxy.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConfigFileTest {
    @TempDir Path dir;

    /** What kubeadm writes for kube-proxy (every field, most at their zero value), switched to nftables mode. */
    static final String KUBEADM = """
            apiVersion: kubeproxy.config.k8s.io/v1alpha1
            kind: KubeProxyConfiguration
            bindAddress: 0.0.0.0
            bindAddressHardFail: false
            clientConnection:
              acceptContentTypes: ""
              burst: 0
              contentType: ""
              kubeconfig: /var/lib/kube-proxy/kubeconfig.conf
              qps: 0
            clusterCIDR: 10.244.0.0/16,fd00:10:244::/56
            configSyncPeriod: 0s
            conntrack:
              maxPerCore: null
              min: null
              tcpCloseWaitTimeout: null
              tcpEstablishedTimeout: null
            detectLocal:
              bridgeInterface: ""
              interfaceNamePrefix: ""
            detectLocalMode: ""
            enableProfiling: false
            healthzBindAddress: ""
            hostnameOverride: ""
            iptables:
              localhostNodePorts: null
              masqueradeAll: false
              masqueradeBit: null
              minSyncPeriod: 0s
              syncPeriod: 0s
            ipvs:
              excludeCIDRs: null
              minSyncPeriod: 0s
              scheduler: ""
            logging:
              flushFrequency: 0
              options:
                json:
                  infoBufferSize: "0"
              verbosity: 0
            metricsBindAddress: ""
            mode: nftables
            nftables:
              masqueradeAll: true
              masqueradeBit: 15
              minSyncPeriod: 250ms
              syncPeriod: 1m0s
            nodePortAddresses: null
            oomScoreAdj: null
            portRange: ""
            showHiddenMetricsForVersion: ""
            winkernel:
              enableDSR: false
            """;

    private ConfigFile.Result read(String yaml) throws Exception {
        Path f = dir.resolve("kube-proxy.yaml");
        Files.writeString(f, yaml);
        return ConfigFile.read(f, ProxyConfig.defaults());
    }

    @Test
    void acceptsAKubeadmConfigAndAppliesTheNftablesFields() throws Exception {
        ConfigFile.Result r = read(KUBEADM.replace("configSyncPeriod: 0s", "configSyncPeriod: 15m0s")
                .replace("healthzBindAddress: \"\"", "healthzBindAddress: 0.0.0.0:10256")
                .replace("metricsBindAddress: \"\"", "metricsBindAddress: 127.0.0.1:10249"));
        ProxyConfig c = r.config();
        assertEquals(Path.of("/var/lib/kube-proxy/kubeconfig.conf"), c.kubeconfig());
        assertEquals(2, c.clusterCidrs().size());
        assertTrue(c.masqueradeAll());
        assertEquals(15, c.masqueradeBit());
        assertEquals(Duration.ofMillis(250), c.minSyncPeriod());
        assertEquals(Duration.ofMinutes(1), c.syncPeriod());
        assertEquals(List.of("primary"), c.nodePortAddresses());
        assertEquals(10256, c.healthzBindAddress().getPort());
        assertTrue(r.notes().stream().anyMatch(n -> n.startsWith("iptables ")), r.notes().toString());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "mode: iptables | mode | nftables",
            "detectLocalMode: NodeCIDR | detectLocalMode | ClusterCIDR",
            "clusterCIDR: 10.0.0.0/33 | clusterCIDR | comma-separated CIDRs",
            "healthzBindAddress: localhost:10256 | healthzBindAddress | no host names",
            "metricsBindAddress: 127.0.0.1:99999 | metricsBindAddress | a port 0..65535",
            "configSyncPeriod: soon | configSyncPeriod | a duration",
            "nodePortAddresses: [\"10.0.0.0/8\", \"eth0\"] | nodePortAddresses | CIDRs such as",
            "colour: blue | colour | a KubeProxyConfiguration field nftproxy knows",
    })
    void rejectsWithTheFieldTheValueAndWhatIsAllowed(String line, String field, String allowed) throws Exception {
        String yaml = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n" + line + "\n";
        ConfigException e = assertThrows(ConfigException.class, () -> read(yaml));
        assertEquals(field, e.field());
        assertTrue(e.getMessage().contains(allowed), e.getMessage());
    }

    @Test
    void nestedUnknownAndBadValuesNameTheFullPath() {
        String base = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n";
        assertEquals("nftables.masqueradeBit", assertThrows(ConfigException.class,
                () -> read(base + "nftables:\n  masqueradeBit: 40\n")).field());
        assertEquals("nftables.fastMode", assertThrows(ConfigException.class,
                () -> read(base + "nftables:\n  fastMode: true\n")).field());
        assertEquals("detectLocal.bridgeInterface", assertThrows(ConfigException.class,
                () -> read(base + "detectLocal:\n  bridgeInterface: cbr0\n")).field());
        assertEquals("apiVersion", assertThrows(ConfigException.class,
                () -> read("apiVersion: kubeproxy.config.k8s.io/v1alpha2\nkind: KubeProxyConfiguration\n")).field());
    }

    @Test
    void crossFieldRules() {
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = "node-a";
        b.minSyncPeriod = Duration.ofMinutes(5);
        assertEquals("nftables.minSyncPeriod", assertThrows(ConfigException.class, () -> b.build().validate()).field());
        b.minSyncPeriod = Duration.ofMillis(100);
        b.kubeconfig = Path.of("/k");
        b.manifests = Path.of("/m");
        assertEquals("manifests", assertThrows(ConfigException.class, () -> b.build().validate()).field());
    }

    @ParameterizedTest
    @CsvSource({"1s,1000", "500ms,500", "1m30s,90000", "1h0m0s,3600000", "1.5s,1500", "0,0"})
    void goDurations(String text, long millis) {
        assertEquals(Duration.ofMillis(millis), GoDuration.parse("f", text));
        assertEquals(Duration.ofMillis(millis), GoDuration.parse("f", GoDuration.format(Duration.ofMillis(millis))));
    }
}
