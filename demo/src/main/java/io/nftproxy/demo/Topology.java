package io.nftproxy.demo;

import io.nftproxy.netlink.Commands;

import io.nftproxy.netlink.NetnsThread;
import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.OwnNamespaces;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.net.IpFamily;
import io.nftproxy.render.Renderer;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * A small cluster made of network namespaces, for real traffic through the proxy's rules: a node with routed
 * veths to its pods and a pod client, a remote node with its pods, an external client, and a LAN bridge (in a
 * namespace of its own, "lan", which is also the LAN's router) joining the node, the remote node and the external
 * client. The addresses come from a {@link Plan}; a plan without IPv6 addresses builds an IPv4-only topology.
 *
 * <p>Everything lives in namespaces named {@code nftp-<tag>-<pid>-<role>} that this class creates; nothing is linked
 * to the root namespace, and every sysctl is set inside a namespace. Pods get routed veths (a /32 per pod, the
 * node's gateway address on each node-side end) rather than a bridge: a bridge would carry pod-to-pod replies at
 * layer 2 past the node's conntrack (without br_netfilter), so DNATed flows between pods of one node would break.
 *
 * <p>{@link #close()} deletes every namespace, and with them every veth, address, route and table.
 */
public final class Topology implements AutoCloseable {
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);
    private static final String LAN_ROLE = "lan";

    /** One pod: its role (also its echo server's name and its namespace's suffix) and addresses. */
    public record Pod(String role, String address, String address6) {
        public Pod {
            Objects.requireNonNull(role, "role");
            Objects.requireNonNull(address, "address");
        }
    }

    /**
     * One node: its LAN address, the pod range routed to it, the gateway address it puts on every pod veth (what a
     * pod sees as the source of node-to-pod and hairpin masquerade), and its serving pods.
     */
    public record NodePlan(String role, String address, String address6, String podCidr, String podCidr6,
                           String podGateway, String podGateway6, List<Pod> pods) {
        public NodePlan { pods = List.copyOf(pods); }
    }

    /**
     * The external client: its addresses (the first is its main one) in {@code cidr}, which is routed to the LAN,
     * and the addresses it reaches through the node, as a cloud load balancer or a BGP speaker would announce them.
     */
    public record ExternalPlan(String role, List<String> addresses, String cidr, List<String> announcedViaNode) {
        public ExternalPlan {
            addresses = List.copyOf(addresses);
            announcedViaNode = List.copyOf(announcedViaNode);
        }
    }

    /**
     * The whole address plan. {@code tag} names the namespaces ({@code nftp-<tag>-<pid>-<role>}); every IPv6 field
     * is null for an IPv4-only topology. The pod client lives on {@code node}.
     */
    public record Plan(String tag, String lanGateway, int lanPrefixLength, String lanGateway6, int lan6PrefixLength,
                       NodePlan node, NodePlan remoteNode, Pod podClient, ExternalPlan external) {
        boolean dualStack() { return lanGateway6 != null; }
    }

    /** One namespace of the topology, its main IPv4 address and a thread inside it on which to open sockets. */
    public record Host(String role, NetworkNamespace netns, String address, NetnsThread thread) {
        @Override public String toString() { return role + "(" + address + ")"; }
    }

    private final Plan plan;
    private final Map<String, Host> hosts = new LinkedHashMap<>();
    private final List<NetworkNamespace> namespaces = new ArrayList<>();
    private final String ip = Commands.executable("ip").orElseThrow();
    private final String sysctl = Commands.executable("sysctl").orElseThrow();
    private NftClient nft;

    private Topology(Plan plan) { this.plan = plan; }

    /** Why the topology cannot be built here, or null: root, ip, nft and sysctl are needed. */
    public static String unavailabilityCause() {
        String cause = OwnNamespaces.unavailabilityCause().orElse(null);
        if (cause == null && Commands.executable("sysctl").isEmpty()) cause = "the sysctl command (procps) is not installed";
        return cause;
    }

    /** Builds the whole topology; on any failure deletes what was made and rethrows. */
    public static Topology build(Plan plan) throws IOException {
        Topology t = new Topology(plan);
        try {
            t.create();
            return t;
        } catch (IOException | RuntimeException | Error e) {
            t.close();
            throw e;
        }
    }

    public Host lan() { return hosts.get(LAN_ROLE); }
    public Host node() { return hosts.get(plan.node().role()); }
    public Host remoteNode() { return hosts.get(plan.remoteNode().role()); }
    public Host podClient() { return hosts.get(plan.podClient().role()); }
    public Host external() { return hosts.get(plan.external().role()); }

    /** The host of {@code role}, or an exception naming the roles there are. */
    public Host host(String role) {
        Host h = hosts.get(role);
        if (h == null) throw new IllegalArgumentException("no host " + role + " in " + hosts.keySet());
        return h;
    }

    /** Every host, in creation order (the LAN first). */
    public List<Host> hosts() { return List.copyOf(hosts.values()); }

    /** The pods that serve: this node's, then the remote node's. */
    public List<Host> backends() {
        return Stream.concat(plan.node().pods().stream(), plan.remoteNode().pods().stream())
                .map(p -> hosts.get(p.role())).toList();
    }

    /** Programs both families' tables. */
    public void program(Renderer.Rendering rendering) throws IOException {
        for (IpFamily f : IpFamily.values()) program(rendering.table(f));
    }

    /**
     * Replaces the node's {@code kube-proxy} table with {@code table}, in one transaction, through the libnftables
     * client on a thread in the node namespace (the nft binary when the library is missing).
     */
    public void program(TableContent table) throws IOException {
        if (nft == null) nft = NftClients.createInNamespace(NftClients.Mode.AUTO, node().netns()).client();
        if (nft.listTableJson(table.family()) != null) {
            execWithInput(node(), "delete table " + table.family().nftFamily() + " " + TableContent.TABLE_NAME + "\n", "nft", "-f", "-");
        }
        nft.apply(Transaction.creating(table));
    }

    /** Runs a command inside {@code host}'s namespace and fails with its stderr when it fails. */
    public String exec(Host host, String... argv) throws IOException { return execWithInput(host, null, argv); }

    private String execWithInput(Host host, String stdin, String... argv) throws IOException {
        Commands.Result r = host.netns().exec(COMMAND_TIMEOUT, stdin, argv);
        if (!r.ok()) throw new IOException(host.role() + ": " + String.join(" ", argv) + " failed: " + r.stderr().strip());
        return r.stdout();
    }

    private void addHost(String role, String address) throws IOException {
        NetworkNamespace ns = OwnNamespaces.create(plan.tag(), role);
        namespaces.add(ns);
        hosts.put(role, new Host(role, ns, address, NetnsThread.start(ns)));
    }

    private void create() throws IOException {
        NodePlan n = plan.node(), r = plan.remoteNode();
        ExternalPlan x = plan.external();
        addHost(LAN_ROLE, plan.lanGateway());
        addHost(n.role(), n.address());
        for (Pod p : n.pods()) addHost(p.role(), p.address());
        addHost(plan.podClient().role(), plan.podClient().address());
        addHost(r.role(), r.address());
        for (Pod p : r.pods()) addHost(p.role(), p.address());
        addHost(x.role(), x.addresses().get(0));
        // Before any interface exists, so every interface inherits "default": loose reverse-path checks (the
        // node forwards DNATed flows between its uplink and pod veths), no ICMP redirects to muddy the picture, and
        // no ICMP rate limit, which would otherwise turn a quick run of REJECTs into timeouts. No IPv6 duplicate
        // address detection either: addresses are usable at once instead of after a second or two of DAD.
        for (Host h : hosts.values()) {
            int router = h == lan() || h == node() || h == remoteNode() ? 1 : 0;
            exec(h, sysctl, "-q", "-w", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
                    "net.ipv4.conf.all.send_redirects=0", "net.ipv4.conf.default.send_redirects=0",
                    "net.ipv4.icmp_ratelimit=0", "net.ipv6.icmp.ratelimit=0",
                    "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
                    "net.ipv6.conf.all.accept_ra=0", "net.ipv6.conf.default.accept_ra=0",
                    "net.ipv4.ip_forward=" + router, "net.ipv6.conf.all.forwarding=" + router);
        }

        List<String> lan = new ArrayList<>(List.of(
                "link set lo up",
                "link add br0 type bridge",
                "addr add " + plan.lanGateway() + "/" + plan.lanPrefixLength() + " dev br0"));
        if (plan.dualStack()) lan.add("addr add " + plan.lanGateway6() + "/" + plan.lan6PrefixLength() + " dev br0 nodad");
        lan.addAll(List.of(
                "link set br0 up",
                // Each LAN member's veth is created from here, its other end placed straight into the member.
                "link add vnode type veth peer name eth0 netns " + node().netns(),
                "link add vremote type veth peer name eth0 netns " + remoteNode().netns(),
                "link add vext type veth peer name eth0 netns " + external().netns(),
                "link set vnode master br0", "link set vnode up",
                "link set vremote master br0", "link set vremote up",
                "link set vext master br0", "link set vext up",
                "route add " + n.podCidr() + " via " + n.address(),
                "route add " + r.podCidr() + " via " + r.address(),
                "route add " + x.cidr() + " dev br0",
                "route add unreachable default"));
        if (plan.dualStack()) {
            lan.addAll(List.of(
                    "route add " + n.podCidr6() + " via " + n.address6(),
                    "route add " + r.podCidr6() + " via " + r.address6(),
                    "route add unreachable ::/0"));
        }
        batch(lan(), lan);

        List<String> node = new ArrayList<>(uplink(n, r));
        node.add(3, "route add " + x.cidr() + " dev eth0");
        List<Pod> nodePods = new ArrayList<>(n.pods());
        nodePods.add(plan.podClient());
        for (int i = 0; i < nodePods.size(); i++) node.addAll(podLink("vp" + i, nodePods.get(i), n));
        batch(node(), node);

        List<String> remote = new ArrayList<>(uplink(r, n));
        for (int i = 0; i < r.pods().size(); i++) remote.addAll(podLink("vr" + i, r.pods().get(i), r));
        batch(remoteNode(), remote);

        for (Pod pod : n.pods()) podSide(pod, n);
        podSide(plan.podClient(), n);
        for (Pod pod : r.pods()) podSide(pod, r);

        List<String> ext = new ArrayList<>(List.of("link set lo up"));
        for (String a : x.addresses()) ext.add("addr add " + a + "/" + prefixLength(x.cidr()) + " dev eth0");
        ext.add("link set eth0 up");
        ext.add("route add " + n.address() + " dev eth0 scope link");
        for (String a : x.announcedViaNode()) ext.add("route add " + a + " via " + n.address() + " dev eth0");
        batch(external(), ext);
    }

    /** A node's LAN side: its address, the other node's pods via the other node, everything else via the LAN router. */
    private List<String> uplink(NodePlan self, NodePlan other) {
        List<String> cmds = new ArrayList<>(List.of(
                "link set lo up",
                "addr add " + self.address() + "/" + plan.lanPrefixLength() + " dev eth0",
                "link set eth0 up",
                "route add " + other.podCidr() + " via " + other.address(),
                "route add default via " + plan.lanGateway()));
        if (plan.dualStack()) {
            cmds.addAll(List.of(
                    "addr add " + self.address6() + "/" + plan.lan6PrefixLength() + " dev eth0 nodad",
                    "route add " + other.podCidr6() + " via " + other.address6(),
                    "route add ::/0 via " + plan.lanGateway6()));
        }
        return cmds;
    }

    /** The node-side commands for a routed veth to {@code pod}: a host route to the pod, the gateway as a host address. */
    private List<String> podLink(String dev, Pod pod, NodePlan on) {
        List<String> cmds = new ArrayList<>(List.of(
                "link add " + dev + " type veth peer name eth0 netns " + host(pod.role()).netns(),
                "addr add " + on.podGateway() + "/32 dev " + dev,
                "link set " + dev + " up",
                "route add " + pod.address() + "/32 dev " + dev + " src " + on.podGateway()));
        if (plan.dualStack()) {
            cmds.add(2, "addr add " + on.podGateway6() + "/128 dev " + dev + " nodad");
            cmds.add("route add " + pod.address6() + "/128 dev " + dev + " src " + on.podGateway6());
        }
        return cmds;
    }

    /** The pod's own end: its address as a /32 and a default route via the node's gateway address. */
    private void podSide(Pod pod, NodePlan on) throws IOException {
        List<String> cmds = new ArrayList<>(List.of(
                "link set lo up",
                "addr add " + pod.address() + "/32 dev eth0",
                "link set eth0 up",
                "route add " + on.podGateway() + " dev eth0 scope link",
                "route add default via " + on.podGateway() + " dev eth0"));
        if (plan.dualStack()) {
            cmds.add(2, "addr add " + pod.address6() + "/128 dev eth0 nodad");
            cmds.add("route add " + on.podGateway6() + " dev eth0");
            cmds.add("route add ::/0 via " + on.podGateway6() + " dev eth0");
        }
        batch(host(pod.role()), cmds);
    }

    private static String prefixLength(String cidr) { return cidr.substring(cidr.indexOf('/') + 1); }

    private void batch(Host host, List<String> commands) throws IOException {
        Commands.Result r = host.netns().exec(COMMAND_TIMEOUT, String.join("\n", commands) + "\n", ip, "-batch", "-");
        if (!r.ok()) throw new IOException(host.role() + ": ip -batch failed: " + r.stderr().strip());
    }

    /**
     * Stops the namespace threads and the nft client but leaves every namespace in place, for a person to explore
     * ({@code nftproxy demo --keep}); they are then deleted with {@code ip netns del}.
     */
    public synchronized void release() {
        if (nft != null) nft.close();
        nft = null;
        for (Host h : hosts.values()) h.thread().close();
    }

    /** Stops the namespace threads and deletes every namespace; safe to call twice, and after a failed build. */
    @Override public synchronized void close() throws IOException {
        release();
        IOException first = null;
        for (int i = namespaces.size() - 1; i >= 0; i--) {
            NetworkNamespace ns = namespaces.remove(i); // a second close must not delete it again
            try {
                OwnNamespaces.delete(ns);
            } catch (IOException e) {
                if (first == null) first = e;
            }
        }
        if (first != null) throw first;
    }
}
