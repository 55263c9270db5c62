package io.nftproxy.config;

import io.nftproxy.net.IpPrefix;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The effective configuration in kube-proxy's words: the KubeProxyConfiguration fields {@link ConfigFile} reads,
 * with their values after defaults, {@code --config} and flags. {@code --write-config-to} writes it as YAML that
 * {@link ConfigFile} reads back to the same configuration; {@code /configz} serves it as kube-proxy does, under
 * the API group's name. nftproxy's own settings are the map {@code nftproxy} beside kube-proxy's fields.
 * {@code --manifests} and {@code --nft-mode} have no field: the YAML names them in a comment, and they stay flags.
 */
public final class ConfigDocument {
    private ConfigDocument() {}

    /** The KubeProxyConfiguration, field by field, in kube-proxy's (alphabetical) order. */
    public static Map<String, Object> of(ProxyConfig c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("apiVersion", ConfigFile.API_VERSION);
        m.put("kind", ConfigFile.KIND);
        m.put("bindAddress", c.bindAddress().toString());
        m.put("clientConnection", Map.of("kubeconfig", c.kubeconfig() == null ? "" : c.kubeconfig().toString()));
        m.put("clusterCIDR", String.join(",", c.clusterCidrs().stream().map(IpPrefix::toString).toList()));
        m.put("configSyncPeriod", GoDuration.format(c.configSyncPeriod()));
        ConntrackSettings ct = c.conntrack();
        m.put("conntrack", sorted(Map.of("maxPerCore", ct.maxPerCore(), "min", ct.min(), "tcpBeLiberal", ct.tcpBeLiberal(),
                "tcpCloseWaitTimeout", GoDuration.format(ct.tcpCloseWaitTimeout()),
                "tcpEstablishedTimeout", GoDuration.format(ct.tcpEstablishedTimeout()),
                "udpStreamTimeout", GoDuration.format(ct.udpStreamTimeout()),
                "udpTimeout", GoDuration.format(ct.udpTimeout()))));
        m.put("detectLocal", sorted(Map.of("bridgeInterface", c.detectLocal().bridgeInterface(),
                "interfaceNamePrefix", c.detectLocal().interfaceNamePrefix())));
        m.put("detectLocalMode", c.detectLocal().mode());
        m.put("healthzBindAddress", io.nftproxy.net.IpAddress.hostPort(c.healthzBindAddress()));
        m.put("hostnameOverride", c.hostnameOverride() == null ? "" : c.hostnameOverride());
        m.put("logging", sorted(Map.of("format", c.logging().format().name().toLowerCase(Locale.ROOT),
                "verbosity", c.logging().verbosity())));
        m.put("metricsBindAddress", io.nftproxy.net.IpAddress.hostPort(c.metricsBindAddress()));
        m.put("mode", "nftables");
        m.put(ConfigFile.NFTPROXY_SECTION, sorted(Map.of("refuseExternalIPOverlaps", c.refuseExternalIPOverlaps(),
                "tableLayout", c.tableLayout().cliName())));
        m.put("nftables", sorted(Map.of("masqueradeAll", c.masqueradeAll(), "masqueradeBit", c.masqueradeBit(),
                "minSyncPeriod", GoDuration.format(c.minSyncPeriod()), "syncPeriod", GoDuration.format(c.syncPeriod()))));
        m.put("nodePortAddresses", c.nodePortAddresses().values());
        return m;
    }

    /** The file {@code --write-config-to} writes. */
    public static String yaml(ProxyConfig c) {
        StringBuilder head = new StringBuilder("# The effective configuration of nftproxy run (defaults, --config, flags).\n");
        if (c.manifests() != null) head.append("# Not in a KubeProxyConfiguration, give it as a flag: --manifests ").append(c.manifests()).append('\n');
        if (c.nftMode() != io.nftproxy.netlink.nft.NftClients.Mode.AUTO) head.append("# Not in a KubeProxyConfiguration, give it as a flag: --nft-mode ").append(c.nftMode().flagValue()).append('\n');
        return head + YAMLMapper.builder().build().writeValueAsString(of(c)).replaceFirst("^---\\s*\\n", "");
    }

    /**
     * {@code /configz}'s body: {@code {"kubeproxy.config.k8s.io": {...}}}, the group name kube-proxy serves its
     * configuration under. kube-proxy marshals its internal type, whose fields have no JSON names (BindAddress,
     * Conntrack.MaxPerCore); this serves the v1alpha1 file's names instead, which an operator can put in a file.
     */
    public static String configz(ProxyConfig c) {
        return JsonMapper.builder().build().writeValueAsString(Map.of("kubeproxy.config.k8s.io", of(c)));
    }

    /** A section's fields, in alphabetical order as kube-proxy writes them. */
    private static Map<String, Object> sorted(Map<String, ?> fields) { return new TreeMap<>(fields); }
}
