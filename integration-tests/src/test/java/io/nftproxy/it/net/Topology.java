package io.nftproxy.it.net;

import io.nftproxy.it.KernelNamespace;
import io.nftproxy.netlink.NetnsThread;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.NftClients;
import io.nftproxy.nft.DesiredTable;
import io.nftproxy.nft.Transaction;
import io.nftproxy.proxy.IpFamily;
import io.nftproxy.render.Renderer;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.nftproxy.it.net.TestNetworks.*;

/**
 * A small cluster made of network namespaces, for real traffic through the proxy's rules: a node with routed
 * veths to two local pods and a pod client, a remote node with one pod, an external client, and a LAN bridge
 * joining the node, the remote node and the external client (see {@link TestNetworks} for the plan). Dual-stack
 * except the external client, which is IPv4 only.
 *
 * <p>Everything lives in namespaces named {@code nftp-tr-<pid>-<n>} that this class creates; nothing is linked to
 * the root namespace, and every sysctl is set inside a namespace. Pods get routed veths (a /32 per pod, the node's
 * gateway address on each node-side end) rather than a bridge: a bridge would carry pod-to-pod replies at layer 2
 * past the node's conntrack (without br_netfilter), so DNATed flows between pods of one node would break.
 *
 * <p>{@link #close()} deletes every namespace, and with them every veth, address, route and table.
 */
public final class Topology implements AutoCloseable {
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);

    /**
     * One namespace of the topology, its main addresses ({@code address6} null for an IPv4-only host) and a thread
     * inside it on which to open sockets.
     */
    public record Host(String role, KernelNamespace ns, String address, String address6, NetnsThread thread) {
        public String netns() { return ns.name(); }
        @Override public String toString() { return role + "(" + address + ")"; }
    }

    private final Map<String, Host> hosts = new LinkedHashMap<>();
    private final List<KernelNamespace> namespaces = new ArrayList<>();
    private final String ip = KernelNamespace.executable("ip").orElseThrow();
    private final String sysctl = KernelNamespace.executable("sysctl").orElseThrow();
    private NftClient nft;

    private Topology() {}

    /** Why the topology cannot be built here, or null: root, ip, nft and sysctl are needed. */
    public static String unavailabilityCause() {
        String cause = KernelNamespace.unavailabilityCause().orElse(null);
        if (cause == null && KernelNamespace.executable("sysctl").isEmpty()) cause = "the sysctl command (procps) is not installed";
        return cause;
    }

    /** Builds the whole topology; on any failure deletes what was made and rethrows. */
    public static Topology build() throws IOException {
        Topology t = new Topology();
        try {
            t.create();
            return t;
        } catch (IOException | RuntimeException | Error e) {
            t.close();
            throw e;
        }
    }

    public Host lan() { return hosts.get("lan"); }
    public Host node() { return hosts.get("node"); }
    public Host podA() { return hosts.get("pod-a"); }
    public Host podB() { return hosts.get("pod-b"); }
    public Host podClient() { return hosts.get("pod-client"); }
    public Host remoteNode() { return hosts.get("remote-node"); }
    public Host remotePod() { return hosts.get("remote-pod"); }
    public Host external() { return hosts.get("external"); }

    /** The pods that serve: the two on this node and the remote one. */
    public List<Host> backends() { return List.of(podA(), podB(), remotePod()); }
    public List<Host> localBackends() { return List.of(podA(), podB()); }

    /** Programs both families' tables. */
    public void program(Renderer.Rendering rendering) throws IOException {
        for (IpFamily f : IpFamily.values()) program(rendering.table(f));
    }

    /**
     * Replaces the node's {@code kube-proxy} table with {@code table}, in one transaction, through the libnftables
     * client on a thread in the node namespace (the nft binary when the library is missing).
     */
    public void program(DesiredTable table) throws IOException {
        if (nft == null) nft = NftClients.createInNamespace(NftClients.Mode.AUTO, node().netns()).client();
        if (nft.listTableJson(table.family()) != null) {
            node().ns().load("delete table " + table.family().nftFamily() + " " + DesiredTable.TABLE_NAME + "\n");
        }
        nft.apply(Transaction.creating(table));
    }

    /** Runs a command inside {@code host}'s namespace and fails with its stderr when it fails. */
    public String exec(Host host, String... argv) throws IOException {
        KernelNamespace.Result r = host.ns().exec(COMMAND_TIMEOUT, null, argv);
        if (!r.ok()) throw new IOException(host.role() + ": " + String.join(" ", argv) + " failed: " + r.stderr().strip());
        return r.stdout();
    }

    private void create() throws IOException {
        for (String[] h : new String[][] {
                {"lan", LAN_GATEWAY, LAN6_GATEWAY}, {"node", NODE_IP, NODE_IP6}, {"pod-a", POD_A, POD_A6},
                {"pod-b", POD_B, POD_B6}, {"pod-client", POD_CLIENT, POD_CLIENT6},
                {"remote-node", REMOTE_NODE_IP, REMOTE_NODE_IP6}, {"remote-pod", REMOTE_POD, REMOTE_POD6},
                {"external", EXTERNAL_CLIENT, null}}) {
            KernelNamespace ns = KernelNamespace.create("tr");
            namespaces.add(ns);
            hosts.put(h[0], new Host(h[0], ns, h[1], h[2], NetnsThread.start(ns.name())));
        }
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

        String lanPrefix = "/" + LAN_PREFIX_LENGTH;
        String lan6Prefix = "/" + LAN6_PREFIX_LENGTH;
        batch(lan(),
                "link set lo up",
                "link add br0 type bridge",
                "addr add " + LAN_GATEWAY + lanPrefix + " dev br0",
                "addr add " + LAN6_GATEWAY + lan6Prefix + " dev br0 nodad",
                "link set br0 up",
                // Each LAN member's veth is created from here, its other end placed straight into the member.
                "link add vnode type veth peer name eth0 netns " + node().netns(),
                "link add vremote type veth peer name eth0 netns " + remoteNode().netns(),
                "link add vext type veth peer name eth0 netns " + external().netns(),
                "link set vnode master br0", "link set vnode up",
                "link set vremote master br0", "link set vremote up",
                "link set vext master br0", "link set vext up",
                "route add " + POD_CIDR + " via " + NODE_IP,
                "route add " + REMOTE_POD_CIDR + " via " + REMOTE_NODE_IP,
                "route add " + EXTERNAL_CIDR + " dev br0",
                "route add unreachable default",
                "route add " + POD_CIDR6 + " via " + NODE_IP6,
                "route add " + REMOTE_POD_CIDR6 + " via " + REMOTE_NODE_IP6,
                "route add unreachable ::/0");

        List<String> node = new ArrayList<>(List.of(
                "link set lo up",
                "addr add " + NODE_IP + lanPrefix + " dev eth0",
                "link set eth0 up",
                "route add " + EXTERNAL_CIDR + " dev eth0",
                "route add " + REMOTE_POD_CIDR + " via " + REMOTE_NODE_IP,
                "route add default via " + LAN_GATEWAY,
                "addr add " + NODE_IP6 + lan6Prefix + " dev eth0 nodad",
                "route add " + REMOTE_POD_CIDR6 + " via " + REMOTE_NODE_IP6,
                "route add ::/0 via " + LAN6_GATEWAY));
        node.addAll(podLink("vpa", podA(), NODE_POD_GATEWAY, NODE_POD_GATEWAY6));
        node.addAll(podLink("vpb", podB(), NODE_POD_GATEWAY, NODE_POD_GATEWAY6));
        node.addAll(podLink("vpc", podClient(), NODE_POD_GATEWAY, NODE_POD_GATEWAY6));
        batch(node(), node.toArray(String[]::new));

        List<String> remote = new ArrayList<>(List.of(
                "link set lo up",
                "addr add " + REMOTE_NODE_IP + lanPrefix + " dev eth0",
                "link set eth0 up",
                "route add " + POD_CIDR + " via " + NODE_IP,
                "route add default via " + LAN_GATEWAY,
                "addr add " + REMOTE_NODE_IP6 + lan6Prefix + " dev eth0 nodad",
                "route add " + POD_CIDR6 + " via " + NODE_IP6,
                "route add ::/0 via " + LAN6_GATEWAY));
        remote.addAll(podLink("vrp", remotePod(), REMOTE_NODE_POD_GATEWAY, REMOTE_NODE_POD_GATEWAY6));
        batch(remoteNode(), remote.toArray(String[]::new));

        for (Host pod : List.of(podA(), podB(), podClient(), remotePod())) {
            String gw = pod == remotePod() ? REMOTE_NODE_POD_GATEWAY : NODE_POD_GATEWAY;
            String gw6 = pod == remotePod() ? REMOTE_NODE_POD_GATEWAY6 : NODE_POD_GATEWAY6;
            batch(pod,
                    "link set lo up",
                    "addr add " + pod.address() + "/32 dev eth0",
                    "addr add " + pod.address6() + "/128 dev eth0 nodad",
                    "link set eth0 up",
                    "route add " + gw + " dev eth0 scope link",
                    "route add default via " + gw + " dev eth0",
                    "route add " + gw6 + " dev eth0",
                    "route add ::/0 via " + gw6 + " dev eth0");
        }

        // The LB VIP and the externalIP are announced to the external client by a route to the node, as a cloud
        // load balancer or a BGP speaker would.
        batch(external(),
                "link set lo up",
                "addr add " + EXTERNAL_CLIENT + "/24 dev eth0",
                "addr add " + EXTERNAL_DENIED_CLIENT + "/24 dev eth0",
                "link set eth0 up",
                "route add " + NODE_IP + " dev eth0 scope link",
                "route add " + LB_VIP + " via " + NODE_IP + " dev eth0",
                "route add " + EXTERNAL_IP + " via " + NODE_IP + " dev eth0");
    }

    /** The node-side commands for a routed veth to {@code pod}: a host route to the pod, the gateway as a host address. */
    private static List<String> podLink(String dev, Host pod, String gateway, String gateway6) {
        return List.of(
                "link add " + dev + " type veth peer name eth0 netns " + pod.netns(),
                "addr add " + gateway + "/32 dev " + dev,
                "addr add " + gateway6 + "/128 dev " + dev + " nodad",
                "link set " + dev + " up",
                "route add " + pod.address() + "/32 dev " + dev + " src " + gateway,
                "route add " + pod.address6() + "/128 dev " + dev + " src " + gateway6);
    }

    private void batch(Host host, String... commands) throws IOException {
        KernelNamespace.Result r = host.ns().exec(COMMAND_TIMEOUT, String.join("\n", commands) + "\n", ip, "-batch", "-");
        if (!r.ok()) throw new IOException(host.role() + ": ip -batch failed: " + r.stderr().strip());
    }

    /** Stops the namespace threads and deletes every namespace; safe to call twice, and after a failed build. */
    @Override public void close() throws IOException {
        if (nft != null) nft.close();
        nft = null;
        for (Host h : hosts.values()) h.thread().close();
        IOException first = null;
        for (int i = namespaces.size() - 1; i >= 0; i--) {
            try {
                namespaces.get(i).close();
            } catch (IOException e) {
                if (first == null) first = e;
            }
        }
        if (first != null) throw first;
    }
}
