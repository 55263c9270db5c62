package io.nftproxy.config;

import io.nftproxy.logging.LogSettings;
import io.nftproxy.net.InvalidInputException;
import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.net.IpPrefix;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.service.NodeContext;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The daemon's configuration, parsed once and validated once. Defaults live in {@link #defaults()} and nowhere else;
 * docs/configuration.md documents each field with the same defaults. The {@link Builder} collects values (the config
 * file first, flags given explicitly on top) and what could not be parsed; {@link #validate()} holds every rule.
 *
 * @param hostnameOverride  the node's name; endpoints with this nodeName are local
 * @param clusterCidrs      pod network ranges (the local-traffic detector), at most one per family
 * @param minSyncPeriod     least time between the end of one sync and the start of the next
 * @param syncPeriod        retry interval after a failed sync; health times out after twice this
 * @param convergePeriod    each table is converged on (read back, or proved unchanged by its generation) at least this often
 * @param configSyncPeriod  informer resync period
 * @param nftMode           how nftables is driven (--nft-mode; no field in the file)
 * @param logging           verbosity and format (kube-proxy's -v and --logging-format)
 * @param conntrack         the conntrack sysctls set at start
 * @param detectLocal       how pod traffic is recognised
 * @param bindAddress       kube-proxy's bindAddress: unspecified (0.0.0.0 or ::), or this node's primary IP of its family
 * @param nodeIPs           --node-ip: the node's IPs over the Node object's, at most one per family (no field in the file)
 * @param tableLayout       how service ports are written into the table (docs/table-layout.md); nftproxy's own field
 * @param refuseExternalIPOverlaps skip an externalIP or LoadBalancer IP that is another Service's ClusterIP or a node
 *                          address, instead of keeping it with a warning; nftproxy's own field
 */
public record ProxyConfig(String hostnameOverride, List<IpPrefix> clusterCidrs, NodePortAddresses nodePortAddresses,
                          boolean masqueradeAll, int masqueradeBit, InetSocketAddress healthzBindAddress,
                          InetSocketAddress metricsBindAddress, Duration minSyncPeriod, Duration syncPeriod,
                          Duration convergePeriod, Duration configSyncPeriod, Path kubeconfig, Path manifests,
                          NftClients.Mode nftMode, LogSettings logging,
                          ConntrackSettings conntrack, LocalDetection detectLocal, IpAddress bindAddress,
                          List<IpAddress> nodeIPs, TableLayout tableLayout, boolean refuseExternalIPOverlaps) {
    /** What a node IP may be, for messages. */
    public static final String NODE_IP_ALLOWED = "a unicast address: not unspecified, loopback or multicast";

    public ProxyConfig {
        clusterCidrs = List.copyOf(clusterCidrs);
        nodeIPs = List.copyOf(nodeIPs);
    }

    public static ProxyConfig defaults() {
        return new ProxyConfig(null, List.of(), NodePortAddresses.PRIMARY_IPS, false, 14,
                new InetSocketAddress("0.0.0.0", 10256), new InetSocketAddress("127.0.0.1", 10249),
                Duration.ofMillis(100), Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofMinutes(15),
                null, null, NftClients.Mode.AUTO, LogSettings.DEFAULT, ConntrackSettings.DEFAULT, LocalDetection.DEFAULT,
                IpAddress.parse("0.0.0.0"), List.of(), TableLayout.DEFAULT, false);
    }

    /** The renderer these settings ask for: the one place a {@link Renderer} is built from the configuration. */
    public Renderer renderer() {
        Renderer r = new Renderer(tableLayout);
        return refuseExternalIPOverlaps ? r.refusingAddressOverlaps() : r;
    }

    /**
     * Whether {@code ip} can be a node's address: 0.0.0.0 would make the primary nodePortAddresses match nothing
     * useful, 127.0.0.1 would expose NodePorts on loopback, a multicast address is no host's (issue 10).
     */
    public static boolean usableNodeIP(IpAddress ip) {
        return !ip.isUnspecified() && !ip.isLoopback() && !ip.isMulticast();
    }

    /** Every rule, checked at once: all that is wrong comes in one exception, each naming its field and flag. */
    public ProxyConfig validate() { return toBuilder().validate(); }

    private List<ConfigException> violations() {
        List<ConfigException> out = new ArrayList<>();
        if (hostnameOverride == null || hostnameOverride.isEmpty()) {
            out.add(new ConfigException("hostnameOverride", "--hostname-override", hostnameOverride, "the node's name (defaults to the host name)"));
        } else {
            try {
                NodeContext.minimal(hostnameOverride);
            } catch (InvalidInputException e) {
                out.add(new ConfigException("hostnameOverride", "--hostname-override", hostnameOverride, e.allowed()));
            }
        }
        if (kubeconfig != null && manifests != null) {
            out.add(new ConfigException("manifests", "--manifests", manifests, "either a manifest directory or a kubeconfig, not both"));
        }
        if (masqueradeBit < 0 || masqueradeBit > 31) {
            out.add(new ConfigException("nftables.masqueradeBit", "--masquerade-bit", masqueradeBit, "an integer 0..31"));
        }
        if (syncPeriod.compareTo(Duration.ofSeconds(1)) < 0) {
            out.add(new ConfigException("nftables.syncPeriod", "--sync-period", syncPeriod, "at least 1s"));
        } else if (minSyncPeriod.compareTo(syncPeriod) > 0) {
            out.add(new ConfigException("nftables.minSyncPeriod", "--min-sync-period", minSyncPeriod,
                    "at most syncPeriod (" + GoDuration.format(syncPeriod) + ")"));
        }
        if (nodePortAddresses.primary() && !nodePortAddresses.cidrs().isEmpty()) {
            out.add(new ConfigException("nodePortAddresses", "--nodeport-addresses", nodePortAddresses,
                    "'" + NodePortAddresses.PRIMARY + "' alone, or CIDRs"));
        }
        onePerFamily(out, "clusterCIDR", "--cluster-cidr", clusterCidrs, IpPrefix::family, "at most one CIDR per IP family");
        for (IpAddress ip : nodeIPs) {
            if (!usableNodeIP(ip)) out.add(new ConfigException(null, "--node-ip", ip, NODE_IP_ALLOWED));
        }
        onePerFamily(out, null, "--node-ip", nodeIPs, IpAddress::family, "at most one address per family");
        detectLocal(out);
        conntrack(out);
        if (logging.verbosity() < 0) out.add(new ConfigException("logging.verbosity", "-v", logging.verbosity(), "an integer 0 or more"));
        return out;
    }

    private static <T> void onePerFamily(List<ConfigException> out, String field, String flag, List<T> items,
                                         Function<T, IpFamily> family, String allowed) {
        if (items.stream().map(family).distinct().count() != items.size()) {
            out.add(new ConfigException(field, flag, String.join(",", items.stream().map(String::valueOf).toList()), allowed));
        }
    }

    /** The mode, and that the mode's own setting is given and is an interface name; as kube-proxy's validation. */
    private void detectLocal(List<ConfigException> out) {
        String mode = detectLocal.mode();
        if (!LocalDetection.MODES.contains(mode)) {
            out.add(new ConfigException("detectLocalMode", "--detect-local-mode", mode, String.join(", ", LocalDetection.MODES)));
        } else if (mode.equals(LocalDetection.BRIDGE_INTERFACE)) {
            interfaceName(out, "detectLocal.bridgeInterface", "--pod-bridge-interface", detectLocal.bridgeInterface(), mode);
        } else if (mode.equals(LocalDetection.INTERFACE_NAME_PREFIX)) {
            interfaceName(out, "detectLocal.interfaceNamePrefix", "--pod-interface-name-prefix", detectLocal.interfaceNamePrefix(), mode);
        }
    }

    /**
     * What the kernel allows in a name (IFNAMSIZ 16 with the terminating zero; no '/', whitespace), and no '*',
     * quote or backslash, which would change the meaning of the nft string.
     */
    private static void interfaceName(List<ConfigException> out, String field, String flag, String s, String mode) {
        if (s.isEmpty() || s.length() > 15 || s.equals(".") || s.equals("..") || !s.matches("[^/\\s*\"\\\\:]+")) {
            out.add(new ConfigException(field, flag, s, "an interface name: 1 to 15 characters, none of / : * \" \\ or "
                    + "whitespace (required by detectLocalMode " + mode + ")"));
        }
    }

    /** Counts are never negative (durations cannot be: Go's format as GoDuration reads it has no sign); 0 leaves a sysctl alone. */
    private void conntrack(List<ConfigException> out) {
        ConntrackSettings c = conntrack;
        if (c.maxPerCore() < 0) {
            out.add(new ConfigException("conntrack.maxPerCore", "--conntrack-max-per-core", c.maxPerCore(), "an integer >= 0 (0 leaves nf_conntrack_max alone)"));
        }
        if (c.min() < 0) out.add(new ConfigException("conntrack.min", "--conntrack-min", c.min(), "an integer >= 0"));
    }

    public Builder toBuilder() { return new Builder(this); }

    /**
     * Field-by-field overrides: the config file first, explicit flags on top. What a source could not parse at all
     * (not a duration, not a CIDR) is kept with {@link #problem} and reported by {@link #validate()} with the rest.
     */
    public static final class Builder {
        public String hostnameOverride;
        public List<IpPrefix> clusterCidrs;
        public NodePortAddresses nodePortAddresses;
        public boolean masqueradeAll;
        public int masqueradeBit;
        public InetSocketAddress healthzBindAddress;
        public InetSocketAddress metricsBindAddress;
        public Duration minSyncPeriod;
        public Duration syncPeriod;
        public Duration convergePeriod;
        public Duration configSyncPeriod;
        public Path kubeconfig;
        public Path manifests;
        public NftClients.Mode nftMode;
        public LogSettings logging;
        public ConntrackSettings conntrack;
        public LocalDetection detectLocal;
        public IpAddress bindAddress;
        public List<IpAddress> nodeIPs;
        public TableLayout tableLayout;
        public boolean refuseExternalIPOverlaps;
        private final List<ConfigException> problems = new ArrayList<>();

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
            convergePeriod = c.convergePeriod;
            configSyncPeriod = c.configSyncPeriod;
            kubeconfig = c.kubeconfig;
            manifests = c.manifests;
            nftMode = c.nftMode;
            logging = c.logging;
            conntrack = c.conntrack;
            detectLocal = c.detectLocal;
            bindAddress = c.bindAddress;
            nodeIPs = c.nodeIPs;
            tableLayout = c.tableLayout;
            refuseExternalIPOverlaps = c.refuseExternalIPOverlaps;
        }

        /** A value a source gave that could not be parsed; the field keeps its previous value. */
        public void problem(ConfigException e) { problems.addAll(e.all()); }

        public ProxyConfig build() {
            return new ProxyConfig(hostnameOverride, clusterCidrs, nodePortAddresses, masqueradeAll, masqueradeBit,
                    healthzBindAddress, metricsBindAddress, minSyncPeriod, syncPeriod, convergePeriod, configSyncPeriod,
                    kubeconfig, manifests, nftMode, logging, conntrack, detectLocal, bindAddress, nodeIPs, tableLayout,
                    refuseExternalIPOverlaps);
        }

        /** What could not be parsed, then what breaks a rule, in one exception; else the configuration. */
        public ProxyConfig validate() {
            ProxyConfig c = build();
            List<ConfigException> all = new ArrayList<>(problems);
            all.addAll(c.violations());
            if (!all.isEmpty()) throw ConfigException.of(all);
            return c;
        }
    }
}
