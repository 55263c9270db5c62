package io.nftproxy.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.nftproxy.cli.RenderCommandTest.EXAMPLES;
import static io.nftproxy.cli.RenderCommandTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs {@code nftproxy trace} in-process over the shipped {@code examples/} (node k8s-node-1, 192.168.10.20; pods
 * 172.20.0.0/16, this node's pods in 172.20.211.0/24; ServiceCIDR 10.96.0.0/12) and checks the verdict line.
 */
class TraceCommandTest {
    static final String POD = "172.20.211.9";
    static final String NODE_IP = "192.168.10.20";
    static final String HELLO = "10.105.101.118";
    static final String HELLO_ENDPOINTS = "172.20.172.15:8080 | 172.20.172.17:8080 | 172.20.211.48:8080 (random)";

    static RenderCommandTest.Run trace(String... packetArgs) {
        List<String> args = new ArrayList<>(List.of("trace", "--manifests", EXAMPLES.toString(),
                "--hostname-override", "k8s-node-1", "--cluster-cidr", "172.20.0.0/16,fd00:172:20::/64"));
        args.addAll(List.of(packetArgs));
        return run(args.toArray(String[]::new));
    }

    static String verdict(RenderCommandTest.Run r) {
        assertEquals(ExitCodes.OK, r.exit(), r.err());
        List<String> lines = r.lines();
        String last = lines.get(lines.size() - 1);
        assertTrue(last.startsWith("verdict: "), r.out());
        return last.substring("verdict: ".length());
    }

    @Test
    void clusterIpFromAPodIsDnatedToHellosThreeEndpointsWithoutMasquerade() {
        RenderCommandTest.Run r = trace("--src", POD, "--dst", HELLO, "--proto", "tcp", "--dport", "80");

        assertEquals("DNAT to " + HELLO_ENDPOINTS + ", masquerade: no", verdict(r));
        assertEquals("origin: pod (--src 172.20.211.9 is inside --cluster-cidr 172.20.0.0/16)", r.lines().get(0));
        assertTrue(r.out().contains("found in @service-ips (demo/hello:http) -> continue (on with the next rule of services)"), r.out());
        assertTrue(r.hasLine("service: matched demo/hello port http (tcp 80), element of @service-ips"), r.out());
        assertTrue(r.out().contains("DNAT via @flat-endpoints-tcp-3 slot 0 of 3 -> 172.20.172.15:8080"), r.out());
        assertEquals("", r.err());

        RenderCommandTest.Run fast = trace("--table-layout", "fast", "--src", POD, "--dst", HELLO, "--proto", "tcp", "--dport", "80");
        assertEquals("DNAT to " + HELLO_ENDPOINTS + ", masquerade: no", verdict(fast));
        assertTrue(fast.out().contains("found in @service-ips -> goto service-VSI2YVQZ-demo/hello/tcp/http"), fast.out());
        assertTrue(fast.hasLine("service: matched demo/hello port http (tcp 80), element of @service-ips"), fast.out());
    }

    /** With run's detector flags: a pod's packet enters on the bridge and keeps its address, another node's is masqueraded. */
    @Test
    void theLocalDetectorFlagsDecideWhichClusterIpTrafficIsMasqueraded() {
        String[] bridge = {"--detect-local-mode=BridgeInterface", "--pod-bridge-interface=cbr0"};
        RenderCommandTest.Run pod = trace(concat(bridge, "--src", POD, "--dst", HELLO, "--proto", "tcp", "--dport", "80"));
        assertEquals("DNAT to " + HELLO_ENDPOINTS + ", masquerade: no", verdict(pod));
        RenderCommandTest.Run outside = trace(concat(bridge, "--src", "192.168.10.50", "--dst", HELLO, "--proto", "tcp", "--dport", "80"));
        assertTrue(verdict(outside).startsWith("DNAT to " + HELLO_ENDPOINTS + ", masquerade: yes"), outside.out());
        assertTrue(outside.out().contains("iifname != \"cbr0\""), outside.out());

        RenderCommandTest.Run bad = trace(concat(new String[] {"--detect-local-mode=BridgeInterface"},
                "--src", POD, "--dst", HELLO, "--proto", "tcp", "--dport", "80"));
        assertEquals(ExitCodes.USAGE, bad.exit(), bad.err());
        assertTrue(bad.err().contains("detectLocal.bridgeInterface"), bad.err());
    }

    private static String[] concat(String[] a, String... b) {
        List<String> l = new ArrayList<>(List.of(a));
        l.addAll(List.of(b));
        return l.toArray(String[]::new);
    }

    /** issue 24: trace from a Service's name; the destination and the matched port are named, in every layout. */
    @Test
    void aServiceNameGivesTheSameTraceAsItsAddressAndPort() {
        for (String layout : List.of("flat", "fast", "upstream")) {
            RenderCommandTest.Run byAddress = trace("--table-layout", layout, "--src", POD, "--dst", HELLO, "--proto", "tcp", "--dport", "80");
            RenderCommandTest.Run byName = trace("--table-layout", layout, "--src", POD, "--service", "demo/hello");
            assertEquals(ExitCodes.OK, byName.exit(), byName.err());
            assertEquals("destination: demo/hello port http, ClusterIP " + HELLO + " tcp 80 (from --service, --via cluster-ip)",
                    byName.lines().get(1));
            List<String> rest = new ArrayList<>(byName.lines());
            rest.remove(1);
            assertEquals(byAddress.lines(), rest, layout);
            assertTrue(byName.hasLine("service: matched demo/hello port http (tcp 80), element of @service-ips"), byName.out());
            RenderCommandTest.Run byPort = trace("--table-layout", layout, "--src", POD, "--service", "demo/hello:80");
            assertEquals(byName.out(), byPort.out());
        }
    }

    @Test
    void viaPicksTheNodePortOrTheLoadBalancerIpAndNoSrcMeansTheNodeItself() {
        RenderCommandTest.Run np = trace("--src", "192.168.10.50", "--service", "demo/hello-lb:http", "--via", "node-port");
        assertEquals("DNAT to 172.20.211.48:8080, masquerade: no", verdict(np));
        assertEquals("destination: demo/hello-lb port http, NodePort on node address " + NODE_IP + " tcp 31950 (from --service, "
                + "--via node-port)", np.lines().get(1));
        assertTrue(np.hasLine("service: matched demo/hello-lb port http (NodePort tcp 31950), element of @service-nodeports"), np.out());

        RenderCommandTest.Run lb = trace("--src", "203.0.113.7", "--service", "demo/hello-lb", "--via", "load-balancer");
        assertTrue(lb.lines().get(1).contains("load-balancer IP 192.168.10.240 tcp 80"), lb.out());
        assertTrue(verdict(lb).startsWith("DROP"), lb.out());

        RenderCommandTest.Run host = trace("--service", "demo/hello");
        assertEquals("origin: host (--src " + NODE_IP + " is an address of node k8s-node-1)", host.lines().get(0));
        assertTrue(verdict(host).startsWith("DNAT to " + HELLO_ENDPOINTS), host.out());
    }

    @Test
    void aServiceThatCannotBeADestinationExitsWithTwoAndSaysWhy() {
        record Case(List<String> args, String expected) {}
        for (Case c : List.of(
                new Case(List.of("--service", "demo/nope"), "Invalid value for option '--service': no Service demo/nope among the objects read"),
                new Case(List.of("--service", "hello"), "Invalid value for option '--service': --service hello is not NAMESPACE/NAME"),
                new Case(List.of("--service", "demo/hello:https"), "Invalid value for option '--service': Service demo/hello has no port https (its ports: http (tcp 80))"),
                new Case(List.of("--service", "demo/hello", "--via", "node-port"), "Invalid value for option '--service': demo/hello port http has no NodePort"),
                new Case(List.of("--service", "demo/hello", "--via", "lb"), "Invalid value for option '--via': \"lb\" is not a Service address (allowed: cluster-ip, node-port, external-ip, load-balancer)"),
                new Case(List.of("--service", "demo/hello", "--dport", "80"), "Invalid value for option '--service': given with '--dport' (allowed: --service, or --dst, --proto and --dport)"),
                new Case(List.of("--service", "demo/hello", "--from", "pod"), "Missing required option: '--src=IP' (--from pod needs the client's address"),
                new Case(List.of("--src", POD, "--dst", HELLO, "--proto", "tcp", "--dport", "80", "--via", "node-port"), "Invalid value for option '--via': only with --service"))) {
            RenderCommandTest.Run r = trace(c.args().toArray(String[]::new));
            assertEquals(ExitCodes.USAGE, r.exit(), c + " -> " + r.err());
            assertTrue(r.err().contains(c.expected()), c + " -> " + r.err());
            assertEquals("", r.out(), c.toString());
        }
    }

    @Test
    void nodePortFromOutsideIsMasqueraded() {
        RenderCommandTest.Run r = trace("--src", "203.0.113.7", "--dst", NODE_IP, "--proto", "tcp", "--dport", "30080");

        assertTrue(verdict(r).startsWith("DNAT to " + HELLO_ENDPOINTS + ", masquerade: yes (mark 0x4000 set in "
                + "services: ip daddr @nodeport-ips tcp dport @flat-nodeports-tcp-3"), r.out());
        RenderCommandTest.Run fast = trace("--table-layout", "fast", "--src", "203.0.113.7", "--dst", NODE_IP, "--proto", "tcp", "--dport", "30080");
        assertTrue(verdict(fast).startsWith("DNAT to " + HELLO_ENDPOINTS + ", masquerade: yes (mark 0x4000 set in "
                + "external-BJ5L76QF-demo/hello-np/tcp/http"), fast.out());
        assertTrue(r.lines().get(0).startsWith("origin: external (--src 203.0.113.7 is not an address of node k8s-node-1"),
                r.out());
    }

    @Test
    void nodePortWithExternalTrafficPolicyLocalKeepsTheClientAndUsesOnlyTheLocalEndpoint() {
        RenderCommandTest.Run r = trace("--src", "192.168.10.50", "--dst", NODE_IP, "--proto", "tcp", "--dport", "31950");

        assertEquals("DNAT to 172.20.211.48:8080, masquerade: no", verdict(r));
        assertTrue(r.out().contains("goto local-WRGIWGFD-demo/hello-lb/tcp/http"), r.out());
    }

    @Test
    void legacyApiGoesToItsHandWrittenEndpoints() {
        RenderCommandTest.Run r = trace("--src", POD, "--dst", "10.110.229.142", "--proto", "tcp", "--dport", "80");

        assertEquals("DNAT to 192.168.10.40:8080 | 192.168.10.41:8080 (random), masquerade: no", verdict(r));
    }

    @Test
    void aWrongPortOnAClusterIpIsRejected() {
        RenderCommandTest.Run r = trace("--src", POD, "--dst", HELLO, "--proto", "tcp", "--dport", "81");

        assertTrue(verdict(r).startsWith("REJECT in cluster-ips-check: "), r.out());
        RenderCommandTest.Run udp = trace("--src", POD, "--dst", HELLO, "--proto", "udp", "--dport", "80");
        assertTrue(verdict(udp).startsWith("REJECT in cluster-ips-check: "), udp.out());
    }

    @Test
    void anUnallocatedAddressInTheServiceCidrIsDropped() {
        RenderCommandTest.Run r = trace("--src", POD, "--dst", "10.96.5.5", "--proto", "tcp", "--dport", "80");

        assertEquals("DROP in cluster-ips-check: ip daddr 10.96.0.0/12 drop comment \"Drop traffic to unallocated ClusterIPs\"",
                verdict(r));
    }

    @Test
    void theLoadBalancerIpFromOutsideItsSourceRangesIsDropped() {
        RenderCommandTest.Run r = trace("--src", "203.0.113.7", "--dst", "192.168.10.240", "--proto", "tcp", "--dport", "80");

        assertEquals("DROP in firewall-WRGIWGFD-demo/hello-lb/tcp/http: ip saddr != { 192.168.10.0/24, 192.168.10.240 } drop",
                verdict(r));
        RenderCommandTest.Run inside = trace("--src", "192.168.10.50", "--dst", "192.168.10.240", "--proto", "tcp", "--dport", "80");
        assertEquals("DNAT to 172.20.211.48:8080, masquerade: no", verdict(inside));
    }

    @Test
    void anIpv6PacketIsTracedThroughTheIp6Table() {
        RenderCommandTest.Run r = trace("--src", "fd00:172:20::9", "--dst", "fd00:10:96::100a", "--proto", "tcp", "--dport", "80");

        assertTrue(r.out().contains("trace ip6 tcp fd00:172:20::9 -> [fd00:10:96::100a]:80"), r.out());
        assertTrue(verdict(r).startsWith("DNAT to [fd00:172:20::3c]:8080"), r.out());
    }

    @Test
    void theOriginIsHostForANodeAddressAndFromOverridesTheGuess() {
        RenderCommandTest.Run host = trace("--src", NODE_IP, "--dst", HELLO, "--proto", "tcp", "--dport", "80");
        assertEquals("origin: host (--src 192.168.10.20 is an address of node k8s-node-1)", host.lines().get(0));
        assertTrue(host.lines().get(1).contains("(HOST: from a local process, enters at output)"), host.out());
        assertTrue(verdict(host).startsWith("DNAT to " + HELLO_ENDPOINTS + ", masquerade: yes"), host.out());

        RenderCommandTest.Run external = trace("--src", "203.0.113.7", "--dst", HELLO, "--proto", "tcp", "--dport", "80");
        assertTrue(verdict(external).startsWith("DNAT to " + HELLO_ENDPOINTS + ", masquerade: yes"), external.out());

        RenderCommandTest.Run given = trace("--src", POD, "--dst", HELLO, "--proto", "tcp", "--dport", "80", "--from", "EXTERNAL");
        assertEquals("origin: external (given with --from)", given.lines().get(0));
        assertEquals("", given.err());
    }

    @Test
    void aFromThatContradictsTheSourceIsTracedWithAWarning() {
        RenderCommandTest.Run r = trace("--src", "203.0.113.7", "--dst", HELLO, "--proto", "tcp", "--dport", "80", "--from", "host");

        assertEquals(ExitCodes.OK, r.exit());
        assertTrue(r.err().startsWith("warning: --from host with --src 203.0.113.7, which is not an address of node k8s-node-1"),
                r.err());
        RenderCommandTest.Run pod = trace("--src", "203.0.113.7", "--dst", HELLO, "--proto", "tcp", "--dport", "80", "--from", "pod");
        assertTrue(pod.err().startsWith("warning: --from pod with --src 203.0.113.7, which is outside every --cluster-cidr"),
                pod.err());
    }

    @Test
    void badFlagValuesExitWithTwoAndNameTheFlagTheValueAndWhatIsAllowed() {
        record Case(List<String> args, String expected) {}
        List<String> ok = List.of("--src", POD, "--dst", HELLO, "--proto", "tcp", "--dport", "80");
        for (Case c : List.of(
                new Case(with(ok, "--src", "pod-a"), "Invalid value for option '--src': \"pod-a\" is not an IP address (allowed: "),
                new Case(with(ok, "--dst", "10.96.0.300"), "Invalid value for option '--dst': \"10.96.0.300\" is not an IP address (allowed: "),
                new Case(with(ok, "--dst", "fd00::1"), "Invalid value for options '--src' and '--dst': 172.20.211.9 and fd00::1 are of "
                        + "different IP families (allowed: two IPv4 or two IPv6 addresses)"),
                new Case(with(ok, "--proto", "icmp"), "Invalid value for option '--proto': \"icmp\" is not a service protocol (allowed: tcp, udp, sctp)"),
                new Case(with(ok, "--dport", "0"), "Invalid value for option '--dport': \"0\" is not a port (allowed: an integer 1..65535)"),
                new Case(with(ok, "--dport", "65536"), "Invalid value for option '--dport': \"65536\" is not a port (allowed: an integer 1..65535)"),
                new Case(with(ok, "--dport", "http"), "Invalid value for option '--dport': \"http\" is not a port (allowed: an integer 1..65535)"),
                new Case(append(ok, "--from", "node"), "Invalid value for option '--from': \"node\" is not an origin (allowed: external, pod, host)"),
                new Case(append(ok, "--masquerade-bit", "40"), "Invalid value: nftables.masqueradeBit (--masquerade-bit): invalid value \"40\"; allowed: an integer 0..31"),
                new Case(ok.subList(0, 6), "Missing required option: '--dport=N'"))) {
            RenderCommandTest.Run r = trace(c.args().toArray(String[]::new));
            assertEquals(ExitCodes.USAGE, r.exit(), c + " -> " + r.err());
            assertTrue(r.err().contains(c.expected()), c + " -> " + r.err());
            assertTrue(r.err().contains("Try 'nftproxy trace --help'"), r.err());
            assertEquals("", r.out(), c.toString());
        }
    }

    @Test
    void aMissingManifestDirectoryExitsWithOne(@TempDir Path dir) {
        RenderCommandTest.Run r = run("trace", "--manifests", dir.resolve("nope").toString(), "--hostname-override", "n1",
                "--src", POD, "--dst", HELLO, "--proto", "tcp", "--dport", "80");

        assertEquals(ExitCodes.INPUT_UNREADABLE, r.exit());
        assertTrue(r.err().contains("--manifests " + dir.resolve("nope") + ": no such directory"), r.err());
    }

    @Test
    void helpTeachesWithExamplesAndSaysHowTheOriginIsChosen() {
        RenderCommandTest.Run r = run("trace", "--help");

        assertEquals(0, r.exit());
        for (String s : List.of("--src=IP", "--dst=IP", "--proto=tcp|udp|sctp", "--dport=N", "--from=external|pod|host",
                "--cluster-cidr=CIDR", "Examples", "--dport 31950", "Exit codes", "inside a --cluster-cidr")) {
            assertTrue(r.out().replaceAll("\\s+", " ").contains(s), s + " in\n" + r.out());
        }
        assertTrue(run("--help").out().contains("trace"), "trace is listed as a subcommand");
    }

    private static List<String> with(List<String> args, String flag, String value) {
        List<String> out = new ArrayList<>(args);
        out.set(out.indexOf(flag) + 1, value);
        return out;
    }

    private static List<String> append(List<String> args, String flag, String value) {
        List<String> out = new ArrayList<>(args);
        out.add(flag);
        out.add(value);
        return out;
    }

    /** The exit code --help names for an untraceable table is the one trace returns. */
    @Test
    void helpNamesTheUntraceableExitCode() {
        RenderCommandTest.Run r = run("trace", "--help");
        assertEquals(ExitCodes.OK, r.exit());
        String help = r.out().replaceAll("\\s+", " ");
        assertTrue(help.contains(ExitCodes.UNTRACEABLE + " the table could not be traced to an end"), help);
    }
}
