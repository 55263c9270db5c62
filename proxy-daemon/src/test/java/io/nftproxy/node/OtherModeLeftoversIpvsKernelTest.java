package io.nftproxy.node;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What kube-proxy's IPVS mode leaves in iptables and ipset, in a network namespace this test creates: its chains,
 * whose rules match on its ip sets, go first, then the sets; what is not kube-proxy's stays. Where ip_vs is not
 * loaded (as on the kernel these tests were written on, which has neither ip_vs nor the dummy link type) nothing of
 * this is touched, as kube-proxy skips it where ip_vs cannot be had; the IPVS steps are then run by asking for them.
 * The virtual-server flush and the kube-ipvs0 link need ip_vs and dummy: they are only checked where the kernel has them.
 */
class OtherModeLeftoversIpvsKernelTest {
    private static final String NAT = """
            *nat
            :KUBE-SERVICES - [0:0]
            :KUBE-POSTROUTING - [0:0]
            :KUBE-NODE-PORT - [0:0]
            :KUBE-LOAD-BALANCER - [0:0]
            :KUBE-MARK-MASQ - [0:0]
            -A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
            -A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
            -A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
            -A KUBE-POSTROUTING -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE
            -A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT
            -A KUBE-SERVICES -m set --match-set KUBE-LOAD-BALANCER dst,dst -j KUBE-LOAD-BALANCER
            -A KUBE-NODE-PORT -p tcp -m set --match-set KUBE-NODE-PORT-TCP dst -j KUBE-MARK-MASQ
            -A POSTROUTING -m set --match-set CNI-OWN dst -j ACCEPT
            COMMIT
            *filter
            :KUBE-FORWARD - [0:0]
            :KUBE-NODE-PORT - [0:0]
            :KUBE-PROXY-FIREWALL - [0:0]
            :KUBE-SOURCE-RANGES-FIREWALL - [0:0]
            :KUBE-IPVS-FILTER - [0:0]
            :KUBE-IPVS-OUT-FILTER - [0:0]
            :KUBE-FIREWALL - [0:0]
            -A INPUT -m comment --comment "kubernetes health check rules" -j KUBE-NODE-PORT
            -A INPUT -m comment --comment "kube-proxy firewall rules" -j KUBE-PROXY-FIREWALL
            -A INPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER
            -A INPUT -j KUBE-FIREWALL
            -A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
            -A OUTPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-OUT-FILTER
            -A KUBE-IPVS-FILTER -m set --match-set KUBE-IPVS-IPS dst -j REJECT
            COMMIT
            """;
    private static final List<String> SETS = List.of(
            "KUBE-LOOP-BACK hash:ip,port,ip", "KUBE-CLUSTER-IP hash:ip,port", "KUBE-LOAD-BALANCER hash:ip,port",
            "KUBE-NODE-PORT-TCP bitmap:port range 0-65535", "KUBE-IPVS-IPS hash:ip", "CNI-OWN hash:ip");

    @Test
    void theIpvsModesChainsGoBeforeItsSetsAndTheRestStays() throws Exception {
        KernelTests.assumeAvailable("iptables-nft-restore", "ipset");
        try (KernelNamespace ns = KernelNamespace.create("ipvsleft")) {
            seed(ns);
            boolean ipvsHere = ns.exec(java.time.Duration.ofSeconds(10), null, "test", "-e", "/proc/net/ip_vs").ok();
            if (!ipvsHere) {
                // The iptables mode's names (KUBE-SERVICES, KUBE-FORWARD, ...) go; what only the IPVS mode makes stays.
                OtherModeLeftovers.Outcome ungated = new OtherModeLeftovers(ns.handle()).remove();
                assertEquals(List.of(), ungated.failures());
                assertEquals("5 removed: iptables-nft nat: KUBE-SERVICES KUBE-POSTROUTING KUBE-MARK-MASQ; "
                        + "iptables-nft filter: KUBE-FORWARD KUBE-PROXY-FIREWALL", ungated.summary());
                assertEquals(SETS.size(), ns.execChecked("ipset", "list", "-n").lines().count(), "no ip_vs: the IPVS mode's sets stay");
                assertTrue(ns.execChecked("iptables-nft-save", "-t", "filter").contains(":KUBE-IPVS-FILTER"));
            } else {
                System.out.println("OtherModeLeftoversIpvsKernelTest: ip_vs is loaded here; the gate opens by itself");
            }

            // run --dry-run's look: what remove() will remove, each name once, and nothing removed by looking.
            String natBefore = ns.execChecked("iptables-nft-save", "-t", "nat").replaceAll("(?m)^#.*\n", "");
            String filterBefore = ns.execChecked("iptables-nft-save", "-t", "filter").replaceAll("(?m)^#.*\n", "");
            String setsBefore = ns.execChecked("ipset", "list", "-n");
            OtherModeLeftovers.Outcome found = new OtherModeLeftovers(ns.handle(), true).find();
            assertEquals(natBefore, ns.execChecked("iptables-nft-save", "-t", "nat").replaceAll("(?m)^#.*\n", ""));
            assertEquals(filterBefore, ns.execChecked("iptables-nft-save", "-t", "filter").replaceAll("(?m)^#.*\n", ""));
            assertEquals(setsBefore, ns.execChecked("ipset", "list", "-n"));

            OtherModeLeftovers.Outcome o = new OtherModeLeftovers(ns.handle(), true).remove();
            assertEquals(o.summary(), found.summary(), "find() lists what remove() removes");
            assertEquals(List.of(), o.failures().stream().filter(f -> !f.startsWith("IPVS virtual servers")).toList(), o.summary());
            String nat = ns.execChecked("iptables-nft-save", "-t", "nat");
            String filter = ns.execChecked("iptables-nft-save", "-t", "filter");
            for (String c : List.of("KUBE-SERVICES", "KUBE-POSTROUTING", "KUBE-NODE-PORT", "KUBE-LOAD-BALANCER", "KUBE-MARK-MASQ")) {
                assertFalse(nat.contains(c), c + " left:\n" + nat);
            }
            for (String c : List.of("KUBE-FORWARD", "KUBE-NODE-PORT", "KUBE-PROXY-FIREWALL", "KUBE-SOURCE-RANGES-FIREWALL",
                    "KUBE-IPVS-FILTER", "KUBE-IPVS-OUT-FILTER")) {
                assertFalse(filter.contains(c), c + " left:\n" + filter);
            }
            assertTrue(nat.contains("-A POSTROUTING -m set --match-set CNI-OWN dst -j ACCEPT"), nat);
            assertTrue(filter.contains("-A INPUT -j KUBE-FIREWALL"), filter);
            List<String> sets = ns.execChecked("ipset", "list", "-n").lines().toList();
            assertEquals(List.of("CNI-OWN"), sets, "kube-proxy's sets destroyed, the other kept");
            assertTrue(o.summary().contains("ipset sets: KUBE-LOOP-BACK KUBE-CLUSTER-IP KUBE-LOAD-BALANCER KUBE-NODE-PORT-TCP KUBE-IPVS-IPS"),
                    o.summary());
            assertTrue(o.summary().contains("iptables-nft filter: KUBE-NODE-PORT KUBE-SOURCE-RANGES-FIREWALL KUBE-IPVS-FILTER KUBE-IPVS-OUT-FILTER"), o.summary());
        }
    }

    private static void seed(KernelNamespace ns) throws IOException {
        for (String set : SETS) ns.execChecked(("ipset create " + set).split(" "));
        ns.execCheckedWithInput(NAT, "iptables-nft-restore", "--noflush");
    }
}
