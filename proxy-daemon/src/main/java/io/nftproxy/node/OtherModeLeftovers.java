package io.nftproxy.node;

import io.nftproxy.netlink.Commands;
import io.nftproxy.netlink.NetworkNamespace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What kube-proxy in nftables mode removes at every start (and {@code --cleanup} always): the chains its iptables
 * mode leaves behind, as its {@code iptables.CleanupLeftovers} does. In the nat table KUBE-SERVICES,
 * KUBE-NODEPORTS, KUBE-POSTROUTING, KUBE-MARK-MASQ, KUBE-PROXY-CANARY and every per-service chain (KUBE-SVC-,
 * KUBE-SVL-, KUBE-SEP-, KUBE-FW-, KUBE-EXT-); in the filter table KUBE-SERVICES, KUBE-EXTERNAL-SERVICES,
 * KUBE-FORWARD, KUBE-NODEPORTS, KUBE-PROXY-FIREWALL, KUBE-PROXY-CANARY; the mangle canary. kubelet's chains
 * (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-MARK-DROP) and everything else stay.
 * nftproxy removes them later than kube-proxy: the daemon after its first sync has programmed both tables
 * (until then they serve the node's Services), {@code cleanup --other-modes} and {@code --all} on request;
 * {@link #find()} lists them without removing anything ({@code run --dry-run}).
 *
 * <p>Each table is one {@code iptables-restore --noflush}: flush the chains, delete the rules of other chains that
 * jump to them (kube-proxy deletes its own jump rules by their exact text first; taking them from the saved table
 * instead also unlinks an older version's), delete the chains. A table with none of them is not written.
 *
 * <p>kube-proxy's image picks one of iptables-nft and iptables-legacy; a node can hold leftovers in either, so both
 * are asked, for IPv4 and IPv6, where installed. A legacy table is read only when the kernel lists it in
 * {@code ip_tables_names}: reading one that is not there would create it. Like kube-proxy's best-effort cleanup
 * (since v1.34 it skips a family whose iptables does not work), a missing or failing binary is skipped.
 *
 * <p>Then what its IPVS mode leaves, as its {@code ipvs.CleanupLeftovers}: every IPVS virtual server (all of them,
 * as kube-proxy flushes them), the dummy link kube-ipvs0, the IPVS mode's chains (nat: KUBE-SERVICES,
 * KUBE-POSTROUTING, KUBE-NODE-PORT, KUBE-LOAD-BALANCER, KUBE-MARK-MASQ; filter: KUBE-FORWARD, KUBE-NODE-PORT,
 * KUBE-PROXY-FIREWALL, KUBE-SOURCE-RANGES-FIREWALL, KUBE-IPVS-FILTER, KUBE-IPVS-OUT-FILTER) and its ip sets, after
 * the chains that reference them. kube-proxy (since v1.34) does this only where {@code modprobe ip_vs} succeeds;
 * loading a module is not ours to do, so here it runs where ip_vs is loaded ({@code /proc/net/ip_vs} exists), which
 * it is wherever IPVS mode ran since the last boot.
 */
public final class OtherModeLeftovers {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> NAT_CHAINS =
            List.of("KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING", "KUBE-MARK-MASQ", "KUBE-PROXY-CANARY");
    private static final List<String> SERVICE_CHAIN_PREFIXES = List.of("KUBE-SVC-", "KUBE-SVL-", "KUBE-SEP-", "KUBE-FW-", "KUBE-EXT-");
    private static final List<String> FILTER_CHAINS = List.of("KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-FORWARD",
            "KUBE-NODEPORTS", "KUBE-PROXY-FIREWALL", "KUBE-PROXY-CANARY");
    private static final List<String> MANGLE_CHAINS = List.of("KUBE-PROXY-CANARY");
    private static final List<String> IPVS_NAT_CHAINS =
            List.of("KUBE-SERVICES", "KUBE-POSTROUTING", "KUBE-NODE-PORT", "KUBE-LOAD-BALANCER", "KUBE-MARK-MASQ");
    private static final List<String> IPVS_FILTER_CHAINS = List.of("KUBE-FORWARD", "KUBE-NODE-PORT", "KUBE-PROXY-FIREWALL",
            "KUBE-SOURCE-RANGES-FIREWALL", "KUBE-IPVS-FILTER", "KUBE-IPVS-OUT-FILTER");
    /** kube-proxy's IPVS ip sets by their IPv4 names, the ones its cleanup destroys. */
    static final List<String> IPVS_SETS = List.of("KUBE-LOOP-BACK", "KUBE-CLUSTER-IP", "KUBE-EXTERNAL-IP",
            "KUBE-EXTERNAL-IP-LOCAL", "KUBE-LOAD-BALANCER", "KUBE-LOAD-BALANCER-FW", "KUBE-LOAD-BALANCER-LOCAL",
            "KUBE-LOAD-BALANCER-SOURCE-IP", "KUBE-LOAD-BALANCER-SOURCE-CIDR", "KUBE-NODE-PORT-TCP", "KUBE-NODE-PORT-LOCAL-TCP",
            "KUBE-NODE-PORT-UDP", "KUBE-NODE-PORT-LOCAL-UDP", "KUBE-NODE-PORT-SCTP-HASH", "KUBE-NODE-PORT-LOCAL-SCTP-HASH",
            "KUBE-HEALTH-CHECK-NODE-PORT", "KUBE-IPVS-IPS");
    static final String IPVS_LINK = "kube-ipvs0";

    /** One iptables implementation for one family: {@code iptables-nft}, {@code ip6tables-legacy}, ... */
    record Backend(String name, String save, String restore, boolean legacy, boolean ipv6) { }

    /** What was removed from one table by one backend (chains; or IPVS services, links, sets by their tool). */
    public record Removed(String backend, String table, List<String> chains) {
        @Override public String toString() { return backend + " " + table + ": " + String.join(" ", chains); }
    }

    /** What a cleanup did: the chains removed and, one line each, what could not be done. */
    public record Outcome(List<Removed> removed, List<String> failures) {
        public static final Outcome NONE = new Outcome(List.of(), List.of());

        public Outcome {
            removed = List.copyOf(removed);
            failures = List.copyOf(failures);
        }

        /** One line for the log: {@code 12 removed: iptables-nft nat: KUBE-SERVICES ...; ip link: kube-ipvs0}. */
        public String summary() {
            return removed.stream().mapToInt(r -> r.chains().size()).sum() + " removed: "
                    + String.join("; ", removed.stream().map(Removed::toString).toList());
        }
    }

    private final NetworkNamespace netns;
    /** Null: whether ip_vs is loaded decides; a test of the IPVS steps on a kernel without it says true. */
    private final Boolean ipvsMode;

    /** In {@code netns}. */
    public OtherModeLeftovers(NetworkNamespace netns) { this(netns, null); }

    OtherModeLeftovers(NetworkNamespace netns, Boolean ipvsMode) {
        this.netns = netns;
        this.ipvsMode = ipvsMode;
    }

    public Outcome remove() { return sweep(true); }

    /**
     * What {@link #remove()} would remove now, changing nothing: the same reads ({@code iptables-save},
     * {@code ipvsadm --save}, {@code ip link}, {@code ipset list -n}), none of the writes. For {@code run --dry-run}.
     */
    public Outcome find() { return sweep(false); }

    private Outcome sweep(boolean apply) {
        List<Removed> removed = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        List<Backend> backends = installedBackends();
        removeChains(backends, false, apply, removed, failures);
        boolean ipvs;
        try {
            ipvs = ipvsMode != null ? ipvsMode : procNet("ip_vs");
        } catch (IOException e) {
            failures.add("ip_vs: " + e.getMessage());
            ipvs = false;
        }
        if (ipvs) removeIpvs(backends, apply, removed, failures);
        return new Outcome(removed, failures);
    }

    private void removeIpvs(List<Backend> backends, boolean apply, List<Removed> removed, List<String> failures) {
        try {
            if (procNet("ip_vs")) {
                Commands.Result list = run(null, ipvsadm(), "--save", "-n");
                if (!list.ok()) throw new IOException("ipvsadm --save failed: " + list.stderr().strip());
                List<String> services = list.stdout().lines().filter(l -> l.startsWith("-A ")).map(l -> l.substring(3)).toList();
                if (!services.isEmpty() && apply) {
                    Commands.Result clear = run(null, ipvsadm(), "--clear");
                    if (!clear.ok()) throw new IOException("ipvsadm --clear failed: " + clear.stderr().strip());
                }
                if (!services.isEmpty()) removed.add(new Removed("ipvs", "virtual servers", services));
            }
        } catch (IOException e) {
            failures.add("IPVS virtual servers: " + e.getMessage());
        }
        try {
            Commands.Result link = run(null, "ip", "-d", "link", "show", IPVS_LINK);
            if (link.ok()) {
                if (!link.stdout().contains("\n    dummy ")) {
                    throw new IOException(IPVS_LINK + " is not a dummy link; left alone");
                }
                if (apply) {
                    Commands.Result del = run(null, "ip", "link", "del", IPVS_LINK);
                    if (!del.ok()) throw new IOException("ip link del " + IPVS_LINK + ": " + del.stderr().strip());
                }
                removed.add(new Removed("ip", "link", List.of(IPVS_LINK)));
            }
        } catch (IOException e) {
            failures.add(IPVS_LINK + ": " + e.getMessage());
        }
        removeChains(backends, true, apply, removed, failures);
        // After the chains: the kernel refuses to destroy a set a rule still matches on.
        Optional<String> ipset = Commands.executable("ipset");
        if (ipset.isEmpty()) return;
        List<String> destroyed = new ArrayList<>();
        if (!apply) {
            try {
                Commands.Result names = run(null, ipset.get(), "list", "-n");
                if (!names.ok()) throw new IOException("ipset list -n failed: " + names.stderr().strip());
                Set<String> present = Set.copyOf(names.stdout().lines().map(String::strip).toList());
                for (String set : IPVS_SETS) if (present.contains(set)) destroyed.add(set);
            } catch (IOException e) {
                failures.add("ipset: " + e.getMessage());
            }
            if (!destroyed.isEmpty()) removed.add(new Removed("ipset", "sets", destroyed));
            return;
        }
        for (String set : IPVS_SETS) {
            try {
                Commands.Result r = run(null, ipset.get(), "destroy", set);
                if (r.ok()) destroyed.add(set);
                else if (!r.stderr().contains("does not exist")) throw new IOException(r.stderr().strip());
            } catch (IOException e) {
                failures.add("ipset " + set + ": " + e.getMessage());
            }
        }
        if (!destroyed.isEmpty()) removed.add(new Removed("ipset", "sets", destroyed));
    }

    /** The iptables (or, {@code ipvs}, the IPVS) mode's chains from each backend's tables; a failure does not stop the rest. */
    private void removeChains(List<Backend> backends, boolean ipvs, boolean apply, List<Removed> removed, List<String> failures) {
        for (Backend b : backends) {
            for (String table : ipvs ? List.of("nat", "filter") : List.of("nat", "filter", "mangle")) {
                try {
                    removeFrom(b, table, chains(table, ipvs), !ipvs && table.equals("nat") ? SERVICE_CHAIN_PREFIXES : List.of(), apply)
                            .flatMap(r -> apply ? Optional.of(r) : notListedYet(r, removed))
                            .ifPresent(removed::add);
                } catch (IOException e) {
                    failures.add(b.name() + " " + table + (ipvs ? " (IPVS mode)" : "") + ": " + e.getMessage());
                }
            }
        }
    }

    /**
     * Without {@code apply} nothing was removed by the iptables-mode step, so the IPVS-mode step finds the names both
     * modes use (KUBE-SERVICES, KUBE-FORWARD, ...) again: listed once, as {@link #remove()} removes them once.
     */
    private static Optional<Removed> notListedYet(Removed r, List<Removed> listed) {
        Set<String> seen = new LinkedHashSet<>();
        for (Removed l : listed) if (l.backend().equals(r.backend()) && l.table().equals(r.table())) seen.addAll(l.chains());
        List<String> rest = r.chains().stream().filter(c -> !seen.contains(c)).toList();
        return rest.isEmpty() ? Optional.empty() : Optional.of(new Removed(r.backend(), r.table(), rest));
    }

    private static String ipvsadm() throws IOException {
        return Commands.executable("ipvsadm").orElseThrow(() -> new IOException("ipvsadm is not installed"));
    }

    private Optional<Removed> removeFrom(Backend b, String table, List<String> chains, List<String> prefixes, boolean apply)
            throws IOException {
        if (b.legacy() && !legacyTablePresent(b.ipv6(), table)) return Optional.empty();
        Commands.Result saved = run(null, b.save(), "-t", table);
        // A family or table this iptables cannot read (no kernel support) has nothing of kube-proxy's in it either.
        if (!saved.ok()) return Optional.empty();
        Optional<String> restore = restoreInput(table, saved.stdout(), chains, prefixes);
        if (restore.isEmpty()) return Optional.empty();
        if (!apply) return Optional.of(new Removed(b.name(), table, chainsOf(restore.get())));
        Commands.Result r = run(restore.get(), b.restore(), "--noflush");
        if (!r.ok()) throw new IOException(b.restore() + " failed (exit " + r.exitCode() + "): " + r.stderr().strip());
        return Optional.of(new Removed(b.name(), table, chainsOf(restore.get())));
    }

    /**
     * The {@code iptables-restore --noflush} input that removes kube-proxy's chains from {@code saved} (one table's
     * {@code iptables-save} output), or empty when it has none.
     */
    static Optional<String> restoreInput(String table, String saved, List<String> chains, List<String> prefixes) {
        Set<String> existing = new LinkedHashSet<>();
        List<String> rules = new ArrayList<>();
        for (String line : saved.split("\n")) {
            if (line.startsWith(":")) existing.add(line.substring(1).split(" ", 2)[0]);
            else if (line.startsWith("-A ")) rules.add(line);
        }
        Set<String> ours = new LinkedHashSet<>();
        for (String c : chains) if (existing.contains(c)) ours.add(c);
        for (String c : existing) if (prefixes.stream().anyMatch(c::startsWith)) ours.add(c);
        if (ours.isEmpty()) return Optional.empty();
        StringBuilder in = new StringBuilder("*").append(table).append('\n');
        for (String c : ours) in.append(':').append(c).append(" - [0:0]\n"); // with --noflush: flushes that chain
        for (String rule : rules) {
            String[] words = rule.split(" ");
            String from = words[1];
            if (!ours.contains(from) && jumpTarget(words).filter(ours::contains).isPresent()) {
                in.append("-D").append(rule.substring(2)).append('\n');
            }
        }
        for (String c : ours) in.append("-X ").append(c).append('\n');
        return Optional.of(in.append("COMMIT\n").toString());
    }

    private static List<String> chains(String table, boolean ipvs) {
        return switch (table) {
            case "nat" -> ipvs ? IPVS_NAT_CHAINS : NAT_CHAINS;
            case "filter" -> ipvs ? IPVS_FILTER_CHAINS : FILTER_CHAINS;
            default -> MANGLE_CHAINS;
        };
    }

    private static Optional<String> jumpTarget(String[] words) {
        for (int i = 0; i + 1 < words.length; i++) {
            if (words[i].equals("-j") || words[i].equals("-g")) return Optional.of(words[i + 1]);
        }
        return Optional.empty();
    }

    private static List<String> chainsOf(String restore) {
        return restore.lines().filter(l -> l.startsWith("-X ")).map(l -> l.substring(3)).toList();
    }

    /** Whether the legacy kernel table exists: only the kernel's list is read, so no table is created by looking. */
    private boolean legacyTablePresent(boolean ipv6, String table) throws IOException {
        Path names = Path.of("/proc/thread-self/net", ipv6 ? "ip6_tables_names" : "ip_tables_names");
        return netns.call(() -> Files.exists(names) && Files.readAllLines(names).contains(table));
    }

    /** Whether {@code /proc/net/NAME} exists in the namespace. */
    private boolean procNet(String name) throws IOException {
        return netns.call(() -> Files.exists(Path.of("/proc/thread-self/net", name)));
    }

    private Commands.Result run(String stdin, String... argv) throws IOException {
        return netns.exec(TIMEOUT, stdin, argv);
    }

    /**
     * iptables-nft and iptables-legacy for each family where Debian's names are installed; where neither is, the
     * plain {@code iptables}, which is then one of the two.
     */
    static List<Backend> installedBackends() {
        List<Backend> out = new ArrayList<>();
        for (String base : List.of("iptables", "ip6tables")) {
            boolean ipv6 = base.startsWith("ip6");
            int before = out.size();
            installed(base + "-nft", false, ipv6).ifPresent(out::add);
            installed(base + "-legacy", true, ipv6).ifPresent(out::add);
            if (out.size() == before) installed(base, false, ipv6).ifPresent(out::add);
        }
        return out;
    }

    /** {@code name}, when both its {@code -save} and its {@code -restore} are installed. */
    private static Optional<Backend> installed(String name, boolean legacy, boolean ipv6) {
        return Commands.executable(name + "-save").flatMap(save -> Commands.executable(name + "-restore")
                .map(restore -> new Backend(name, save, restore, legacy, ipv6)));
    }
}
