package io.nftproxy.config;

import io.nftproxy.logging.LogSettings;
import io.nftproxy.net.IpPrefix;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The daemon's configuration, parsed and validated once. Defaults live in {@link #defaults()} and nowhere else;
 * docs/configuration.md documents each field with the same defaults.
 *
 * @param hostnameOverride  the node's name; endpoints with this nodeName are local
 * @param clusterCidrs      pod network ranges (the local-traffic detector), at most one per family
 * @param nodePortAddresses "primary" or CIDRs
 * @param minSyncPeriod     least time between the end of one sync and the start of the next
 * @param syncPeriod        retry interval after a failed sync; health times out after twice this
 * @param fullSyncPeriod    a full (read-back and verify) sync at least this often
 * @param configSyncPeriod  informer resync period
 * @param logging           verbosity and format (kube-proxy's -v and --logging-format)
 */
public record ProxyConfig(String hostnameOverride, List<IpPrefix> clusterCidrs, List<String> nodePortAddresses,
                          boolean masqueradeAll, int masqueradeBit, InetSocketAddress healthzBindAddress,
                          InetSocketAddress metricsBindAddress, Duration minSyncPeriod, Duration syncPeriod,
                          Duration fullSyncPeriod, Duration configSyncPeriod, Path kubeconfig, Path manifests,
                          String nftMode, LogSettings logging) {
    public static final String PRIMARY = "primary";

    public ProxyConfig {
        clusterCidrs = List.copyOf(clusterCidrs);
        nodePortAddresses = List.copyOf(nodePortAddresses);
    }

    public static ProxyConfig defaults() {
        return new ProxyConfig(null, List.of(), List.of(PRIMARY), false, 14,
                new InetSocketAddress("0.0.0.0", 10256), new InetSocketAddress("127.0.0.1", 10249),
                Duration.ofMillis(100), Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofMinutes(15),
                null, null, "auto", LogSettings.DEFAULT);
    }

    /** Checks the cross-field rules; single fields are checked as they are parsed. */
    public ProxyConfig validate() {
        if (hostnameOverride == null || hostnameOverride.isEmpty()) {
            throw new ConfigException("hostnameOverride", hostnameOverride, "the node's name (defaults to the host name)");
        }
        if (kubeconfig != null && manifests != null) {
            throw new ConfigException("manifests", manifests, "either a manifest directory or a kubeconfig, not both");
        }
        if (masqueradeBit < 0 || masqueradeBit > 31) throw new ConfigException("nftables.masqueradeBit", masqueradeBit, "0..31");
        if (minSyncPeriod.isNegative()) throw new ConfigException("nftables.minSyncPeriod", minSyncPeriod, "a duration >= 0");
        if (syncPeriod.compareTo(Duration.ofSeconds(1)) < 0) throw new ConfigException("nftables.syncPeriod", syncPeriod, "at least 1s");
        if (minSyncPeriod.compareTo(syncPeriod) > 0) {
            throw new ConfigException("nftables.minSyncPeriod", GoDuration.format(minSyncPeriod), "at most syncPeriod (" + GoDuration.format(syncPeriod) + ")");
        }
        if (nodePortAddresses.contains(PRIMARY) && nodePortAddresses.size() > 1) {
            throw new ConfigException("nodePortAddresses", String.join(",", nodePortAddresses), "'" + PRIMARY + "' alone, or CIDRs");
        }
        for (String a : nodePortAddresses) {
            if (a.equals(PRIMARY)) continue;
            try {
                IpPrefix.parse(a);
            } catch (io.nftproxy.net.InvalidInputException e) {
                throw new ConfigException("nodePortAddresses", a, "'" + PRIMARY + "' or CIDRs such as 192.168.10.0/24");
            }
        }
        long families = clusterCidrs.stream().map(IpPrefix::family).distinct().count();
        if (families != clusterCidrs.size()) throw new ConfigException("clusterCIDR", clusterCidrs, "at most one CIDR per IP family");
        if (!List.of("auto", "library", "exec").contains(nftMode)) throw new ConfigException("nft-mode", nftMode, "auto, library or exec");
        return this;
    }

    public Builder toBuilder() { return new Builder(this); }

    /** Field-by-field overrides: the config file first, explicit flags on top. */
    public static final class Builder {
        public String hostnameOverride;
        public List<IpPrefix> clusterCidrs;
        public List<String> nodePortAddresses;
        public boolean masqueradeAll;
        public int masqueradeBit;
        public InetSocketAddress healthzBindAddress;
        public InetSocketAddress metricsBindAddress;
        public Duration minSyncPeriod;
        public Duration syncPeriod;
        public Duration fullSyncPeriod;
        public Duration configSyncPeriod;
        public Path kubeconfig;
        public Path manifests;
        public String nftMode;
        public LogSettings logging;

        Builder(ProxyConfig c) {
            hostnameOverride = c.hostnameOverride;
            clusterCidrs = c.clusterCidrs;
            nodePortAddresses = c.nodePortAddresses;
            masqueradeAll = c.masqueradeAll;
            masqueradeBit = c.masqueradeBit;
            healthzBindAddress = c.healthzBindAddress;
            metricsBindAddress = c.metricsBindAddress;
            minSyncPeriod = c.minSyncPeriod;
            syncPeriod = c.syncPeriod;
            fullSyncPeriod = c.fullSyncPeriod;
            configSyncPeriod = c.configSyncPeriod;
            kubeconfig = c.kubeconfig;
            manifests = c.manifests;
            nftMode = c.nftMode;
            logging = c.logging;
        }

        public ProxyConfig build() {
            return new ProxyConfig(hostnameOverride, clusterCidrs, nodePortAddresses, masqueradeAll, masqueradeBit,
                    healthzBindAddress, metricsBindAddress, minSyncPeriod, syncPeriod, fullSyncPeriod, configSyncPeriod,
                    kubeconfig, manifests, nftMode, logging);
        }
    }
}
