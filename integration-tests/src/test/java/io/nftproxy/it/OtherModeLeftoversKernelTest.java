package io.nftproxy.it;

import io.nftproxy.netlink.KernelTests;
import io.nftproxy.it.daemon.DaemonProcess;

import io.nftproxy.cli.ExitCodes;
import io.nftproxy.netlink.KernelNamespace;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kube-proxy's iptables-mode chains, seeded in iptables-nft and iptables-legacy (IPv4 and IPv6) of a network
 * namespace this test creates beside rules that are not kube-proxy's (kubelet's KUBE-FIREWALL, a CNI chain, an
 * ACCEPT in INPUT), are removed by {@code cleanup --other-modes}, {@code cleanup --all} and by the daemon after its
 * first sync, and the other rules stay; {@code cleanup} alone and {@code run --init-only} leave them.
 */
class OtherModeLeftoversKernelTest {
    /** What kube-proxy 1.36's iptables mode leaves in a node with one ClusterIP Service and one endpoint. */
    private static final String NAT = """
            *nat
            :KUBE-SERVICES - [0:0]
            :KUBE-NODEPORTS - [0:0]
            :KUBE-POSTROUTING - [0:0]
            :KUBE-MARK-MASQ - [0:0]
            :KUBE-PROXY-CANARY - [0:0]
            :KUBE-SVC-NPX46M4PTMTKRN6Y - [0:0]
            :KUBE-SEP-ABCDEF0123456789 - [0:0]
            :CNI-HOSTPORT-DNAT - [0:0]
            -A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
            -A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
            -A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
            -A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT
            -A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
            -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
            -A KUBE-SERVICES -d %1$s -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y
            -A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
            -A KUBE-SVC-NPX46M4PTMTKRN6Y -j KUBE-SEP-ABCDEF0123456789
            -A KUBE-SEP-ABCDEF0123456789 -p tcp -m tcp -j DNAT --to-destination %2$s
            COMMIT
            """;
    private static final String FILTER = """
            *filter
            :KUBE-SERVICES - [0:0]
            :KUBE-EXTERNAL-SERVICES - [0:0]
            :KUBE-FORWARD - [0:0]
            :KUBE-NODEPORTS - [0:0]
            :KUBE-PROXY-FIREWALL - [0:0]
            :KUBE-PROXY-CANARY - [0:0]
            :KUBE-FIREWALL - [0:0]
            -A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES
            -A INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS
            -A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL
            -A INPUT -j KUBE-FIREWALL
            -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT
            -A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
            -A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
            -A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
            -A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
            -A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
            COMMIT
            """;
    private static final String MANGLE = """
            *mangle
            :KUBE-PROXY-CANARY - [0:0]
            :KUBE-KUBELET-CANARY - [0:0]
            COMMIT
            """;
    private static final List<String> KUBE_PROXY_CHAINS = List.of("KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING",
            "KUBE-MARK-MASQ", "KUBE-PROXY-CANARY", "KUBE-SVC-NPX46M4PTMTKRN6Y", "KUBE-SEP-ABCDEF0123456789",
            "KUBE-EXTERNAL-SERVICES", "KUBE-FORWARD", "KUBE-PROXY-FIREWALL");

    /** iptables implementation and the addresses its seed uses. */
    private record Backend(String name, String serviceIp, String endpoint) {
        boolean ipv6() { return name.startsWith("ip6"); }
    }

    private static final List<Backend> BACKENDS = List.of(
            new Backend("iptables-nft", "10.96.0.1/32", "192.0.2.10:6443"),
            new Backend("iptables-legacy", "10.96.0.1/32", "192.0.2.10:6443"),
            new Backend("ip6tables-nft", "fd00:10:96::1/128", "[2001:db8::10]:6443"),
            new Backend("ip6tables-legacy", "fd00:10:96::1/128", "[2001:db8::10]:6443"));

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailable("iptables-nft-restore", "iptables-legacy-restore", "ip6tables-nft-restore", "ip6tables-legacy-restore");
    }

    @Test
    void cleanupOtherModesAndAllRemoveKubeProxysIptablesChainsFromNftAndLegacyAndLeaveTheRest() throws Exception {
        for (String flag : List.of("--other-modes", "--all")) {
            try (KernelNamespace ns = KernelNamespace.create("leftover")) {
                seed(ns);
                CliRun r = CliRun.of("cleanup", flag, "--netns", ns.name());
                assertEquals(ExitCodes.OK, r.exit(), r::err);
                assertTrue(r.out().contains("deleted kube-proxy's iptables/IPVS-mode leftovers, 56 removed: iptables-nft nat:"), r.out());
                assertEquals(flag.equals("--all"), r.out().contains("table ip kube-proxy"), flag + ": " + r.out());
                assertOnlyKubeProxysGone(ns);

                CliRun again = CliRun.of("cleanup", flag, "--netns", ns.name());
                assertEquals(ExitCodes.OK, again.exit(), again::err);
                assertTrue(again.out().contains("kube-proxy's iptables/IPVS-mode leftovers: none, nothing to delete"),
                        "a second cleanup finds nothing: " + again.out());
            }
        }
    }

    /** {@code cleanup} is documented as "our tables, nothing else", and the unit's pre-start sets sysctls only. */
    @Test
    void cleanupAloneAndInitOnlyLeaveThem() throws Exception {
        try (KernelNamespace ns = KernelNamespace.create("leftover")) {
            seed(ns);
            String before = saveAll(ns);
            CliRun r = CliRun.of("cleanup", "--netns", ns.name());
            assertEquals(ExitCodes.OK, r.exit(), r::err);
            assertFalse(r.out().contains("IPVS-mode"), r.out());
            CliRun init = CliRun.of("run", "--init-only", "--conntrack-max-per-core=0", "--conntrack-tcp-timeout-established=0",
                    "--conntrack-tcp-timeout-close-wait=0", "--hostname-override", "k8s-node-1", "--netns", ns.name());
            assertEquals(ExitCodes.OK, init.exit(), init::err);
            assertEquals(before, saveAll(ns), "cleanup and --init-only left every iptables rule as it was");
        }
    }

    private static String saveAll(KernelNamespace ns) throws IOException {
        StringBuilder out = new StringBuilder();
        for (Backend b : BACKENDS) out.append(save(ns, b).replaceAll("(?m)^#.*\n", "")).append('\n');
        return out.toString();
    }

    /** The daemon as systemd starts it: its own process in the namespace; after its first sync one INFO line says what went. */
    @Test
    void theDaemonRemovesThemAtStartAndSaysSoOnce() throws Exception {
        try (KernelNamespace ns = KernelNamespace.create("leftover")) {
            seed(ns);
            String text;
            try (DaemonProcess d = DaemonProcess.start(ns, java -> java, Map.of(), "--manifests", "../examples",
                    "--hostname-override", "k8s-node-1", "--conntrack-max-per-core=0", "--conntrack-tcp-timeout-established=0",
                    "--conntrack-tcp-timeout-close-wait=0")) {
                boolean synced = d.awaitLog("first sync done", Duration.ofSeconds(60));
                text = d.log();
                assertTrue(synced, text);
                assertOnlyKubeProxysGone(ns);
            }
            List<String> lines = text.lines().filter(l -> l.contains("iptables/IPVS-mode leftovers")).toList();
            assertEquals(1, lines.size(), text);
            assertTrue(lines.get(0).contains("level=INFO") && lines.get(0).contains("56 removed")
                    && lines.get(0).contains("iptables-legacy filter: KUBE-SERVICES"), lines.get(0));
        }
    }

    private static void seed(KernelNamespace ns) throws IOException {
        for (Backend b : BACKENDS) {
            String rules = NAT.formatted(b.serviceIp(), b.endpoint()) + (b.ipv6()
                    ? FILTER.replace("127.0.0.0/8", "::1/128").replace(",DNAT -j DROP", " -j DROP") : FILTER) + MANGLE;
            ns.execCheckedWithInput(rules, b.name() + "-restore", "--noflush");
            String saved = save(ns, b);
            for (String c : KUBE_PROXY_CHAINS) assertTrue(saved.contains(":" + c + " "), b + " seeded " + c + ":\n" + saved);
        }
    }

    private static void assertOnlyKubeProxysGone(KernelNamespace ns) throws IOException {
        for (Backend b : BACKENDS) {
            String saved = save(ns, b);
            for (String c : KUBE_PROXY_CHAINS) assertFalse(saved.contains(c + " "), b.name() + " still has " + c + ":\n" + saved);
            for (String kept : List.of(":KUBE-FIREWALL - ", "-A INPUT -j KUBE-FIREWALL", "-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT",
                    ":CNI-HOSTPORT-DNAT - ", "-j CNI-HOSTPORT-DNAT", ":KUBE-KUBELET-CANARY - ", "-A KUBE-FIREWALL ")) {
                assertTrue(saved.contains(kept), b.name() + " lost '" + kept + "':\n" + saved);
            }
        }
    }

    private static String save(KernelNamespace ns, Backend b) throws IOException {
        List<String> out = new ArrayList<>();
        for (String table : List.of("nat", "filter", "mangle")) out.add(ns.execChecked(b.name() + "-save", "-t", table));
        return String.join("\n", out);
    }
}
