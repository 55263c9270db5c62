package io.nftproxy.it;

import io.nftproxy.netlink.KernelTests;
import io.nftproxy.cli.ExitCodes;
import io.nftproxy.netlink.KernelNamespace;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code nftproxy conntrack} on flows inserted with {@code conntrack -I} into a throwaway namespace, classified
 * against the shipped examples: the service flows are listed with their tuples, kind of address and state; other
 * flows are not.
 */
class ConntrackCommandKernelTest {
    private static KernelNamespace ns;

    @BeforeAll
    static void fixtures() throws IOException {
        KernelTests.assumeAvailable("conntrack");
        ns = KernelNamespace.create("ctcmd");
        // A pod's connection to hello's ClusterIP, DNATed to the local pod, answered.
        insert("tcp", "172.20.211.9", 40001, "10.105.101.118", 80, "172.20.211.48", 8080, "--state", "ESTABLISHED", "-u", "SEEN_REPLY,ASSURED");
        // A DNS query to kube-dns that was never answered.
        insert("udp", "172.20.211.9", 40002, "10.96.0.10", 53, "172.20.235.193", 53);
        // An external client on hello-np's NodePort, DNATed to a pod on the other node.
        insert("tcp", "198.51.100.10", 40003, "192.168.10.20", 30080, "172.20.172.15", 8080, "--state", "SYN_SENT");
        // Not a service: a pod talking to the outside.
        insert("tcp", "172.20.211.9", 40004, "192.0.2.50", 443, "192.0.2.50", 443, "--state", "ESTABLISHED");
    }

    @AfterAll
    static void delete() throws IOException {
        if (ns != null) ns.close();
    }

    private static void insert(String proto, String src, int sport, String dst, int dport, String replySrc, int replySport,
                               String... extra) throws IOException {
        List<String> a = new ArrayList<>(List.of(KernelNamespace.executable("conntrack").orElseThrow(), "-I", "-p", proto,
                "-s", src, "-d", dst, "--sport", String.valueOf(sport), "--dport", String.valueOf(dport), "-r", replySrc,
                "-q", src, "--reply-port-src", String.valueOf(replySport), "--reply-port-dst", String.valueOf(sport), "-t", "120"));
        a.addAll(List.of(extra));
        KernelNamespace.Result r = ns.exec(Duration.ofSeconds(10), null, a.toArray(String[]::new));
        assertTrue(r.ok(), () -> String.join(" ", a) + ": " + r.stderr());
    }

    private static List<String> cmd(String... extra) {
        List<String> a = new ArrayList<>(List.of("conntrack", "--manifests", "../examples", "--hostname-override", "k8s-node-1",
                "--netns", ns.name()));
        a.addAll(List.of(extra));
        return a;
    }

    /** The data lines, each squeezed to single spaces. */
    private static List<String> rows(CliRun r) {
        return r.out().lines().skip(1).map(l -> l.strip().replaceAll("\\s+", " ")).sorted().toList();
    }

    @Test
    void listsTheServiceFlowsAndNothingElse() {
        CliRun r = CliRun.of(cmd());
        assertEquals(ExitCodes.OK, r.exit(), r::err);
        assertTrue(r.out().startsWith("SERVICE"), r.out());
        assertEquals(List.of(
                "demo/hello-np:http tcp 198.51.100.10:40003 -> 192.168.10.20:30080 172.20.172.15:8080 -> 198.51.100.10:40003 NodePort SYN_SENT [UNREPLIED]",
                "demo/hello:http tcp 172.20.211.9:40001 -> 10.105.101.118:80 172.20.211.48:8080 -> 172.20.211.9:40001 ClusterIP ESTABLISHED [ASSURED]",
                "kube-system/kube-dns:dns udp 172.20.211.9:40002 -> 10.96.0.10:53 172.20.235.193:53 -> 172.20.211.9:40002 ClusterIP [UNREPLIED]"),
                rows(r));
    }

    @Test
    void serviceFilterKeepsOneServicesFlows() {
        CliRun r = CliRun.of(cmd("--service", "demo/hello"));
        assertEquals(ExitCodes.OK, r.exit(), r::err);
        assertEquals(1, rows(r).size(), r.out());
        assertTrue(rows(r).get(0).startsWith("demo/hello:http tcp 172.20.211.9:40001"), r.out());

        CliRun none = CliRun.of(cmd("--service", "demo/absent"));
        assertEquals(ExitCodes.OK, none.exit(), none::err);
        assertEquals("no conntrack flows belong to service demo/absent\n", none.out());
    }

    @Test
    void aMalformedServiceIsAUsageError() {
        CliRun r = CliRun.of(cmd("--service", "hello"));
        assertEquals(ExitCodes.USAGE, r.exit(), r::out);
        assertTrue(r.err().contains("NAMESPACE/NAME"), r.err());
    }
}
