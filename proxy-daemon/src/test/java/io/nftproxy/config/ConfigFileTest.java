package io.nftproxy.config;

import io.nftproxy.logging.LogSettings;
import io.nftproxy.net.IpPrefix;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.event.Level;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
        assertTrue(r.notes().stream().anyMatch(n -> n.field().equals("iptables") && n.level() == Level.DEBUG), r.notes().toString());
    }

    /**
     * The config.conf kubeadm v1.36 puts into the kube-proxy ConfigMap, byte for byte: kubeadm built from
     * k8s.io/kubernetes v1.36.3 (cmd/kubeadm), {@code kubeadm init --dry-run --skip-phases=preflight} with
     * {@code networking.podSubnet: 10.244.0.0/16}, data."config.conf" of the ConfigMap it would create. Every zero
     * value means kube-proxy's default, nothing is refused, and nothing in it is worth a warning.
     */
    @Test
    void kubeadmsGeneratedConfigurationLoadsUnchangedWithKubeProxysDefaults() throws Exception {
        Path f = Path.of(ConfigFileTest.class.getResource("/kubeadm-v1.36-kube-proxy-config.conf").toURI());
        ConfigFile.Result r = ConfigFile.read(f, ProxyConfig.defaults());
        ProxyConfig c = r.config();
        ProxyConfig d = ProxyConfig.defaults();
        assertEquals(Path.of("/var/lib/kube-proxy/kubeconfig.conf"), c.kubeconfig());
        assertEquals(List.of(IpPrefix.parse("10.244.0.0/16")), c.clusterCidrs());
        assertEquals(new InetSocketAddress("0.0.0.0", 10256), c.healthzBindAddress());
        assertEquals(new InetSocketAddress("127.0.0.1", 10249), c.metricsBindAddress());
        assertEquals(d.minSyncPeriod(), c.minSyncPeriod());
        assertEquals(Duration.ofSeconds(30), c.syncPeriod());
        assertEquals(Duration.ofMinutes(15), c.configSyncPeriod());
        assertEquals(14, c.masqueradeBit());
        assertFalse(c.masqueradeAll());
        assertEquals(List.of("primary"), c.nodePortAddresses());
        assertEquals(d.hostnameOverride(), c.hostnameOverride());
        assertEquals(List.of(), r.notes().stream().filter(n -> n.level() != Level.DEBUG).toList());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "healthzBindAddress: \"\"",
            "metricsBindAddress: \"\"",
            "configSyncPeriod: 0s",
            "nftables: {syncPeriod: 0s, minSyncPeriod: 0s, masqueradeBit: null}",
            "nftables: {syncPeriod: \"\"}",
            "hostnameOverride: \"\"",
            "nodePortAddresses: null",
            "nodePortAddresses: []",
            "bindAddress: \"\"",
            "clusterCIDR: \"\"",
    })
    void zeroAndEmptyMeanTheDefault(String line) throws Exception {
        ConfigFile.Result r = read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n" + line + "\n");
        assertEquals(ProxyConfig.defaults(), r.config());
    }

    @Test
    void anIpv6BindAddressMovesTheServersDefaultsToIpv6() throws Exception {
        ProxyConfig c = read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nbindAddress: \"::\"\n"
                + "healthzBindAddress: \"\"\nmetricsBindAddress: \"\"\n").config();
        assertEquals(new InetSocketAddress("::", 10256), c.healthzBindAddress());
        assertEquals(new InetSocketAddress("::1", 10249), c.metricsBindAddress());
        assertEquals(new InetSocketAddress("::", 10256), read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\n"
                + "kind: KubeProxyConfiguration\nhealthzBindAddress: \"[::]\"\n").config().healthzBindAddress());
    }

    /** Set to something nftproxy does not do: loaded, and one WARN that names the field. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "conntrack: {maxPerCore: 65536} | conntrack.maxPerCore",
            "conntrack: {tcpEstablishedTimeout: 2h0m0s} | conntrack.tcpEstablishedTimeout",
            "conntrack: {tcpBeLiberal: true} | conntrack.tcpBeLiberal",
            "conntrack: {udpTimeout: 30s} | conntrack.udpTimeout",
            "oomScoreAdj: 0 | oomScoreAdj",
            "enableProfiling: true | enableProfiling",
            "featureGates: {SomeGate: true} | featureGates",
            "showHiddenMetricsForVersion: \"1.35\" | showHiddenMetricsForVersion",
            "bindAddress: 192.168.10.20 | bindAddress",
    })
    void unsupportedBehaviourIsAWarningNamingTheField(String line, String field) throws Exception {
        ConfigFile.Result r = read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n" + line + "\n");
        List<ConfigFile.Note> warnings = r.notes().stream().filter(n -> n.level() == Level.WARN).toList();
        assertEquals(1, warnings.size(), r.notes().toString());
        assertEquals(field, warnings.get(0).field());
        assertTrue(warnings.get(0).toString().startsWith(field + ": "), warnings.get(0).toString());
    }

    @Test
    void kubeProxysDefaultValuesWrittenOutAreNoWarning() throws Exception {
        ConfigFile.Result r = read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                + "oomScoreAdj: -999\nconntrack: {maxPerCore: null, min: null, tcpBeLiberal: false, udpTimeout: 0s}\n");
        assertEquals(List.of(), r.notes().stream().filter(n -> n.level() == Level.WARN).toList());
    }

    @Test
    void loggingFormatAndVerbosityAreApplied() throws Exception {
        ProxyConfig c = read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                + "logging: {format: json, verbosity: 4, flushFrequency: 5s}\n").config();
        assertEquals(new LogSettings(4, LogSettings.Format.JSON), c.logging());
        assertEquals("logging.format", assertThrows(ConfigException.class, () -> read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\n"
                + "kind: KubeProxyConfiguration\nlogging: {format: xml}\n")).field());
    }

    @Test
    void everyErrorOfAFileIsReportedAtOnce() {
        ConfigException e = assertThrows(ConfigException.class, () -> read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\n"
                + "kind: KubeProxyConfiguration\nclusterCIDR: 10.0.0.0/33\nnftables: {masqueradeBit: 40, syncPeriod: soon}\n"
                + "colour: blue\n"));
        assertEquals(List.of("clusterCIDR", "nftables.masqueradeBit", "nftables.syncPeriod", "colour"),
                e.all().stream().map(ConfigException::field).toList());
        assertEquals("clusterCIDR", e.field());
        assertTrue(e.getMessage().contains("nftables.masqueradeBit: invalid value \"40\"") && e.getMessage().contains("colour: "), e.getMessage());
    }

    /** A duration in a message is spelled as in the file (Go's format), not as Java prints it (PT0.5S). */
    @Test
    void validationMessagesSpellDurationsTheGoWay() {
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = "node-a";
        b.syncPeriod = Duration.ofMillis(500);
        b.minSyncPeriod = Duration.ZERO;
        ConfigException e = assertThrows(ConfigException.class, () -> b.build().validate());
        assertEquals("nftables.syncPeriod: invalid value \"500ms\"; allowed: at least 1s", e.getMessage());
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
