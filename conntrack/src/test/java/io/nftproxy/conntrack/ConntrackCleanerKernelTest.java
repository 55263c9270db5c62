package io.nftproxy.conntrack;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.ProxyState;
import io.nftproxy.service.ProxyStateBuilder;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.slice6;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The cleaner against the kernel's conntrack table in a throwaway namespace: entries made with {@code conntrack -I},
 * results read back with {@code conntrack -L}, so both ends are checked by a tool that is not ours.
 */
class ConntrackCleanerKernelTest {
    private static final Pattern FIRST_SPORT = Pattern.compile("sport=(\\d+)");

    /** kube-system/dns, dual-stack, UDP 53 (NodePort 30053) and TCP 53; ready endpoints 10.0.1.1 and fd00:10::1. */
    static ClusterSnapshot cluster_() {
        return cluster()
                .service(svc("kube-system", "dns").type("NodePort").dualStack("172.30.0.10", "fd00:172:30::10")
                        .port("dns", "UDP", 53, 30053).port("dns-tcp", "TCP", 53, 30054).build())
                .slice(slice("kube-system", "dns", "dns-4").port("dns", "UDP", 5353).port("dns-tcp", "TCP", 5353)
                        .ready("10.0.1.1", TestClusters.NODE).build())
                .slice(slice6("kube-system", "dns", "dns-6").port("dns", "UDP", 5353).port("dns-tcp", "TCP", 5353)
                        .ready("fd00:10::1", TestClusters.NODE).build())
                .service(svc("default", "empty").clusterIP("172.30.0.30").port("p", "UDP", 9999).build())
                .snapshot();
    }

    private ProxyState v4;
    private ProxyState v6;

    @BeforeEach
    void states() {
        v4 = ProxyStateBuilder.build(cluster_(), IpFamily.IPV4, TestClusters.NODE);
        v6 = ProxyStateBuilder.build(cluster_(), IpFamily.IPV6, TestClusters.NODE);
    }

    /** One {@code conntrack -I} argument list: client sport identifies the entry in the listing. */
    private static String[] insert(String proto, String src, int sport, String dst, int dport, String replySrc,
                                   int replySport, String... extra) {
        List<String> a = new ArrayList<>(List.of("conntrack", "-I", "-p", proto, "-s", src, "-d", dst,
                "--sport", String.valueOf(sport), "--dport", String.valueOf(dport), "-r", replySrc, "-q", src,
                "--reply-port-src", String.valueOf(replySport), "--reply-port-dst", String.valueOf(sport), "-t", "120"));
        if (proto.equals("tcp")) a.addAll(List.of("--state", "ESTABLISHED"));
        a.addAll(List.of(extra));
        return a.toArray(String[]::new);
    }

    /** {@code conntrack -L} of both families, one entry a line. */
    private static List<String> conntrackList(KernelNamespace ns) throws IOException {
        List<String> out = new ArrayList<>();
        for (String family : List.of("ipv4", "ipv6")) {
            for (String line : ns.execChecked("conntrack", "-L", "-f", family).split("\n")) if (!line.isBlank()) out.add(line.strip());
        }
        return out;
    }

    private static void fixtures(KernelNamespace ns) throws Exception {
        // kept: reply from the ready endpoint
        ns.execChecked(insert("udp", "10.0.5.5", 40001, "172.30.0.10", 53, "10.0.1.1", 5353));
        // deleted: endpoint gone
        ns.execChecked(insert("udp", "10.0.5.5", 40002, "172.30.0.10", 53, "10.0.9.9", 5353));
        // deleted: made while there were no endpoints, never DNATed
        ns.execChecked(insert("udp", "10.0.5.5", 40003, "172.30.0.10", 53, "172.30.0.10", 53));
        // deleted: NodePort, endpoint gone
        ns.execChecked(insert("udp", "198.51.100.7", 40004, "192.168.10.20", 30053, "10.0.9.9", 5353));
        // kept: TCP is never touched, even to a gone endpoint
        ns.execChecked(insert("tcp", "10.0.5.5", 40005, "172.30.0.10", 53, "10.0.9.9", 5353));
        // deleted: the service has no endpoints at all (#139628)
        ns.execChecked(insert("udp", "10.0.5.5", 40006, "172.30.0.30", 9999, "10.0.9.8", 9999));
        // deleted: in conntrack zone 5, which the delete request must name
        ns.execChecked(insert("udp", "10.0.5.5", 40007, "172.30.0.10", 53, "10.0.9.9", 5353, "-w", "5"));
        // kept: pod to pod, no service
        ns.execChecked(insert("udp", "10.0.5.5", 40008, "10.0.1.1", 5353, "10.0.1.1", 5353));
        // kept: NodePort flow answered by the live endpoint
        ns.execChecked(insert("udp", "198.51.100.7", 40009, "192.168.10.20", 30053, "10.0.1.1", 5353));
        // IPv6: deleted (endpoint gone) and kept (live endpoint)
        ns.execChecked(insert("udp", "fd00:10::5", 40010, "fd00:172:30::10", 53, "fd00:10::99", 5353));
        ns.execChecked(insert("udp", "fd00:10::5", 40011, "fd00:172:30::10", 53, "fd00:10::1", 5353));
        // deleted: NodePort flow answered by the live endpoint, but on a port it no longer serves (targetPort changed)
        ns.execChecked(insert("udp", "198.51.100.7", 40012, "192.168.10.20", 30053, "10.0.1.1", 8080));
    }

    private static Set<Integer> clientPorts(List<String> lines) {
        Set<Integer> out = new TreeSet<>();
        for (String l : lines) {
            Matcher m = FIRST_SPORT.matcher(l);
            if (m.find()) out.add(Integer.parseInt(m.group(1)));
        }
        return out;
    }

    @Test
    void deletesExactlyTheStaleUdpEntries() throws Exception {
        KernelTests.assumeAvailable("conntrack");
        try (KernelNamespace ns = KernelNamespace.create("ct")) {
            fixtures(ns);
            assertEquals(Set.of(40001, 40002, 40003, 40004, 40005, 40006, 40007, 40008, 40009, 40010, 40011, 40012),
                    clientPorts(conntrackList(ns)), "fixtures inserted");

            CleanupReport r = ns.handle().call(() -> new ConntrackCleaner().clean(v4, v6));
            System.out.println("conntrack cleanup of the fixtures: " + r);

            assertEquals(Set.of(40001, 40005, 40008, 40009, 40011), clientPorts(conntrackList(ns)),
                    "left after cleanup:\n" + String.join("\n", conntrackList(ns)));
            assertEquals(7, r.deleted(), r.toString());
            assertEquals(7, r.stale(), r.toString());
            assertEquals(0, r.errors(), r.toString());
            assertEquals(12, r.listed(), r.toString());
            CleanupReport.Family fam4 = r.families().get(0);
            assertEquals(IpFamily.IPV4, fam4.family());
            assertEquals(9, fam4.udp(), "the TCP entry is listed but not UDP");

            CleanupReport again = ns.handle().call(() -> new ConntrackCleaner().clean(v4, v6));
            assertEquals(0, again.stale(), "a second cleanup finds nothing: " + again);
            assertEquals(5, again.listed(), again.toString());
        }
    }

    @Test
    void anEntryDeletedBehindOurBackIsCountedAsGoneNotAsAnError() throws Exception {
        KernelTests.assumeAvailable("conntrack");
        try (KernelNamespace ns = KernelNamespace.create("ct")) {
            ns.execChecked(insert("udp", "10.0.5.5", 40002, "172.30.0.10", 53, "10.0.9.9", 5353));
            ns.execChecked(insert("udp", "10.0.5.5", 40012, "172.30.0.10", 53, "10.0.9.9", 5353));
            StaleFlowFilter filter = StaleFlowFilter.of(v4);
            ConntrackTable.DeleteOutcome o = ns.handle().call(() -> {
                try (ConntrackTable t = ConntrackTable.open()) {
                    List<FlowEntry> stale = t.dump(IpFamily.IPV4, System.nanoTime() + 5_000_000_000L).stream()
                            .filter(filter::isStale).collect(Collectors.toList());
                    assertEquals(2, stale.size(), stale.toString());
                    ns.execChecked("conntrack", "-D", "-p", "udp", "--sport", "40002");
                    return t.delete(stale, System.nanoTime() + 5_000_000_000L);
                }
            });
            assertEquals(1, o.deleted(), o.toString());
            assertEquals(1, o.gone(), o.toString());
            assertEquals(0, o.errors(), o.toString());
            assertTrue(conntrackList(ns).isEmpty(), conntrackList(ns).toString());
        }
    }

    @Test
    void listerNamesTheServiceOfEachFlow() throws Exception {
        KernelTests.assumeAvailable("conntrack");
        try (KernelNamespace ns = KernelNamespace.create("ct")) {
            fixtures(ns);
            List<ServiceFlow> flows = ns.handle().call(() -> new ConntrackLister().list(v4, v6));
            List<String> seen = flows.stream()
                    .map(f -> f.flow().origSrcPort() + " " + f.service() + " " + f.via())
                    .sorted().collect(Collectors.toList());
            assertEquals(List.of(
                    "40001 kube-system/dns:dns/UDP CLUSTER_IP",
                    "40002 kube-system/dns:dns/UDP CLUSTER_IP",
                    "40003 kube-system/dns:dns/UDP CLUSTER_IP",
                    "40004 kube-system/dns:dns/UDP NODE_PORT",
                    "40005 kube-system/dns:dns-tcp/TCP CLUSTER_IP",
                    "40006 default/empty:p/UDP CLUSTER_IP",
                    "40007 kube-system/dns:dns/UDP CLUSTER_IP",
                    "40009 kube-system/dns:dns/UDP NODE_PORT",
                    "40010 kube-system/dns:dns/UDP CLUSTER_IP",
                    "40011 kube-system/dns:dns/UDP CLUSTER_IP",
                    "40012 kube-system/dns:dns/UDP NODE_PORT"), seen);
            ServiceFlow zoned = flows.stream().filter(f -> f.flow().origSrcPort() == 40007).findFirst().orElseThrow();
            assertEquals(5, zoned.flow().zone());
            assertEquals(12, conntrackList(ns).size(), "listing deletes nothing");
        }
    }
}
