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

    /** A file read as run reads it, into the defaults with a node name (the OS's, for run), then validated. */
    record Read(ProxyConfig config, List<ConfigFile.Note> notes) {}

    static final String NODE = "k8s-node-1";

    static Read read(Path f) throws Exception {
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = NODE;
        List<ConfigFile.Note> notes = ConfigFile.read(f, b);
        return new Read(b.validate(), notes);
    }

    private Read read(String yaml) throws Exception {
        Path f = dir.resolve("kube-proxy.yaml");
        Files.writeString(f, yaml);
        return read(f);
    }

    @Test
    void acceptsAKubeadmConfigAndAppliesTheNftablesFields() throws Exception {
        Read r = read(KUBEADM.replace("configSyncPeriod: 0s", "configSyncPeriod: 15m0s")
                .replace("healthzBindAddress: \"\"", "healthzBindAddress: 0.0.0.0:10256")
                .replace("metricsBindAddress: \"\"", "metricsBindAddress: 127.0.0.1:10249"));
        ProxyConfig c = r.config();
        assertEquals(Path.of("/var/lib/kube-proxy/kubeconfig.conf"), c.kubeconfig());
        assertEquals(2, c.clusterCidrs().size());
        assertTrue(c.masqueradeAll());
        assertEquals(15, c.masqueradeBit());
        assertEquals(Duration.ofMillis(250), c.minSyncPeriod());
        assertEquals(Duration.ofMinutes(1), c.syncPeriod());
        assertEquals(NodePortAddresses.PRIMARY_IPS, c.nodePortAddresses());
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
        Read r = read(f);
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
        assertEquals(NodePortAddresses.PRIMARY_IPS, c.nodePortAddresses());
        assertEquals(NODE, c.hostnameOverride(), "an empty hostnameOverride keeps the name it had");
        // Its conntrack fields are null: kube-proxy's defaults, which the daemon sets at start as kube-proxy does.
        assertEquals(ConntrackSettings.DEFAULT, c.conntrack());
        assertEquals(LocalDetection.DEFAULT, c.detectLocal());
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
        Read r = read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n" + line + "\n");
        ProxyConfig.Builder d = ProxyConfig.defaults().toBuilder();
        d.hostnameOverride = NODE;
        assertEquals(d.build(), r.config());
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
            "oomScoreAdj: 0 | oomScoreAdj",
            "enableProfiling: true | enableProfiling",
            "featureGates: {SomeGate: true} | featureGates",
            "showHiddenMetricsForVersion: \"1.35\" | showHiddenMetricsForVersion",
    })
    void unsupportedBehaviourIsAWarningNamingTheField(String line, String field) throws Exception {
        Read r = read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n" + line + "\n");
        List<ConfigFile.Note> warnings = r.notes().stream().filter(n -> n.level() == Level.WARN).toList();
        assertEquals(1, warnings.size(), r.notes().toString());
        assertEquals(field, warnings.get(0).field());
        assertTrue(warnings.get(0).toString().startsWith(field + ": "), warnings.get(0).toString());
    }

    /** As kube-proxy's defaulting: null keeps the default, 0 means "leave the sysctl alone", a value is taken. */
    @Test
    void conntrackNullIsTheDefaultAndZeroLeavesItAlone() throws Exception {
        String head = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n";
        assertEquals(ConntrackSettings.DEFAULT, read(head + "conntrack: {maxPerCore: null, min: null, tcpEstablishedTimeout: null, "
                + "tcpCloseWaitTimeout: null}\n").config().conntrack());
        assertEquals(new ConntrackSettings(0, 131072, Duration.ZERO, Duration.ofHours(1), true, Duration.ofSeconds(30),
                Duration.ofMinutes(2)), read(head + "conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpBeLiberal: true, "
                + "udpTimeout: 30s, udpStreamTimeout: 2m0s}\n").config().conntrack());
    }

    @Test
    void detectLocalModeAndItsInterfaceSettingsAreRead() throws Exception {
        String head = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n";
        assertEquals(new LocalDetection("BridgeInterface", "cbr0", ""), read(head + "detectLocalMode: BridgeInterface\n"
                + "detectLocal: {bridgeInterface: cbr0, interfaceNamePrefix: \"\"}\n").config().detectLocal());
        assertEquals(new LocalDetection("InterfaceNamePrefix", "", "veth"), read(head + "detectLocal: {interfaceNamePrefix: veth}\n"
                + "detectLocalMode: InterfaceNamePrefix\n").config().detectLocal());
        assertEquals("NodeCIDR", read(head + "detectLocalMode: NodeCIDR\n").config().detectLocal().mode());
        assertEquals("detectLocal.bridgeInterface", assertThrows(ConfigException.class,
                () -> read(head + "detectLocalMode: BridgeInterface\n")).field());
    }

    @Test
    void aBindAddressIsKept() throws Exception {
        assertEquals(io.nftproxy.net.IpAddress.parse("192.168.10.20"), read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\n"
                + "kind: KubeProxyConfiguration\nbindAddress: 192.168.10.20\n").config().bindAddress());
    }

    @Test
    void kubeProxysDefaultValuesWrittenOutAreNoWarning() throws Exception {
        Read r = read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
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
        // What could not be parsed first, in the file's order, then the rules the parsed values break.
        assertEquals(List.of("clusterCIDR", "nftables.syncPeriod", "colour", "nftables.masqueradeBit"),
                e.all().stream().map(ConfigException::field).toList());
        assertEquals("clusterCIDR", e.field());
        assertTrue(e.getMessage().contains("nftables.masqueradeBit (--masquerade-bit): invalid value \"40\"") && e.getMessage().contains("colour: "), e.getMessage());
    }

    /** A duration in a message is spelled as in the file (Go's format), not as Java prints it (PT0.5S). */
    @Test
    void validationMessagesSpellDurationsTheGoWay() {
        ProxyConfig.Builder b = ProxyConfig.defaults().toBuilder();
        b.hostnameOverride = "node-a";
        b.syncPeriod = Duration.ofMillis(500);
        b.minSyncPeriod = Duration.ZERO;
        ConfigException e = assertThrows(ConfigException.class, () -> b.build().validate());
        assertEquals("nftables.syncPeriod (--sync-period): invalid value \"500ms\"; allowed: at least 1s", e.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "mode: iptables | mode | nftables",
            "detectLocalMode: PodCIDR | detectLocalMode | ClusterCIDR, NodeCIDR, BridgeInterface, InterfaceNamePrefix",
            "conntrack: {maxPerCore: -1} | conntrack.maxPerCore | an integer >= 0",
            "conntrack: {udpTimeout: soon} | conntrack.udpTimeout | a duration",
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

    /** nftproxy's own settings: a top-level map beside kube-proxy's fields, checked like them. */
    @Test
    void nftproxysOwnSettingsAreOneMapBesideKubeProxysFields() throws Exception {
        String base = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n";
        Read r = read(base + "nftproxy:\n  tableLayout: fast\n  refuseExternalIPOverlaps: true\n");
        assertEquals(io.nftproxy.render.TableLayout.FAST, r.config().tableLayout());
        assertTrue(r.config().refuseExternalIPOverlaps());
        assertEquals(List.of(), r.notes());
        assertEquals(io.nftproxy.render.TableLayout.DEFAULT, read(base + "nftproxy: {tableLayout: \"\"}\n").config().tableLayout());
        ConfigException bad = assertThrows(ConfigException.class, () -> read(base + "nftproxy:\n  tableLayout: chains\n"));
        assertEquals("nftproxy.tableLayout", bad.field());
        assertTrue(bad.getMessage().contains("nftproxy.tableLayout (--table-layout): invalid value \"chains\"; allowed: flat, fast or upstream"),
                bad.getMessage());
        assertEquals("nftproxy.refuseExternalIPOverlaps", assertThrows(ConfigException.class,
                () -> read(base + "nftproxy:\n  refuseExternalIPOverlaps: maybe\n")).field());
        assertEquals("nftproxy.colour", assertThrows(ConfigException.class,
                () -> read(base + "nftproxy:\n  colour: blue\n")).field());
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

    private static final String HEAD = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n";

    /** A YAML error names the file, the line and the column; a tab says what is wrong with it (issue 24). */
    @Test
    void aSyntaxErrorNamesTheFileLineAndColumn() {
        Path f = dir.resolve("kube-proxy.yaml");
        ConfigException tab = assertThrows(ConfigException.class, () -> read(HEAD + "nftables:\n\tsyncPeriod: 1s\n"));
        assertEquals("--config " + f + ": a tab character at line 4, column 1: YAML indents with spaces", tab.getMessage());
        ConfigException flow = assertThrows(ConfigException.class, () -> read(HEAD + "nodePortAddresses: [10.0.0.0/8\n"));
        assertEquals("--config " + f + ": invalid YAML at line 4, column 1: expected ',' or ']', but got the end of the document "
                + "(the flow sequence that starts at line 3, column 20)", flow.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "'' | the file is empty; it should hold a KubeProxyConfiguration: a map with apiVersion: kubeproxy.config.k8s.io/v1alpha1 and kind: KubeProxyConfiguration",
            "'# nothing yet\n' | the file is empty; it should hold a KubeProxyConfiguration",
            "'- mode: nftables\n' | the file holds a list, not a map; it should hold a KubeProxyConfiguration",
            "'nftables\n' | the file holds the string \"nftables\", not a map",
            "'kind: KubeProxyConfiguration\n' | apiVersion is missing; it should hold a KubeProxyConfiguration",
    })
    void aFileThatHoldsNoConfigurationSaysWhatItHoldsAndWhatItShould(String yaml, String message) {
        ConfigException e = assertThrows(ConfigException.class, () -> read(yaml.replace("\\n", "\n")));
        assertTrue(e.getMessage().startsWith("--config " + dir.resolve("kube-proxy.yaml") + ": " + message), e.getMessage());
    }

    /** The value as it is in the file, never the parser's node type (STRING) or its JSON quoting (""fourteen""). */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "mode: 5 | mode: invalid value \"5\"; allowed: a string",
            "nftables: {masqueradeBit: fourteen} | nftables.masqueradeBit: invalid value \"fourteen\"; allowed: an integer 0..31",
            "clientConnection: {qps: fast} | clientConnection.qps: invalid value \"fast\"; allowed: a number",
            "nodePortAddresses: primary | nodePortAddresses: invalid value \"primary\"; allowed: a list of CIDRs, or [\"primary\"]",
            "nftables: [a, b] | nftables: invalid value \"[\"a\",\"b\"]\"; allowed: a map",
            "conntrack: {tcpBeLiberal: yes please} | conntrack.tcpBeLiberal: invalid value \"yes please\"; allowed: true or false",
            "colour: blue | colour: unknown field; allowed: a KubeProxyConfiguration field nftproxy knows (see docs/configuration.md)",
    })
    void aBadValueIsQuotedAsWritten(String line, String message) {
        assertEquals(message, assertThrows(ConfigException.class, () -> read(HEAD + line + "\n")).getMessage());
    }

    @ParameterizedTest
    @CsvSource({"1s,1000", "500ms,500", "1m30s,90000", "1h0m0s,3600000", "1.5s,1500", "0,0"})
    void goDurations(String text, long millis) {
        assertEquals(Duration.ofMillis(millis), GoDuration.parse("f", text));
        assertEquals(Duration.ofMillis(millis), GoDuration.parse("f", GoDuration.format(Duration.ofMillis(millis))));
    }
}
