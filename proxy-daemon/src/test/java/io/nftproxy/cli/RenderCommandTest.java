package io.nftproxy.cli;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Runs {@code nftproxy render} in-process on the shipped {@code examples/} and on small hand-made directories. */
class RenderCommandTest {
    static final Path EXAMPLES = Path.of("..", "examples");

    record Run(int exit, String out, String err) {
        List<String> lines() { return out.lines().toList(); }

        boolean hasLine(String line) { return lines().contains(line); }
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = NftproxyCommand.newCommandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    static Run renderExamples(String... extra) {
        List<String> args = new ArrayList<>(List.of("render", "--manifests", EXAMPLES.toString(),
                "--hostname-override", "k8s-node-1", "--cluster-cidr", "172.20.0.0/16,fd00:172:20::/64"));
        args.addAll(List.of(extra));
        return run(args.toArray(String[]::new));
    }

    @Test
    void examplesRenderWithSeed001ObjectNamesAndNoWarnings() {
        Run r = renderExamples("--table-layout", "upstream");

        assertEquals(0, r.exit(), r.err());
        assertEquals("", r.err());
        for (String chain : List.of("service-VSI2YVQZ-demo/hello/tcp/http", "service-BJ5L76QF-demo/hello-np/tcp/http",
                "external-BJ5L76QF-demo/hello-np/tcp/http", "service-WRGIWGFD-demo/hello-lb/tcp/http",
                "service-2QRHZV4L-default/kubernetes/tcp/https", "service-FY5PMXPG-kube-system/kube-dns/udp/dns",
                "service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp", "service-AS2KJYAD-kube-system/kube-dns/tcp/metrics",
                "service-4MXLGZVK-demo/hello-sticky/tcp/http", "local-4H2GLPZP-demo/hello-local/tcp/http",
                "service-AKGLRN4Y-demo/hello-near/tcp/http")) {
            assertTrue(r.hasLine("add chain ip kube-proxy " + chain), chain);
        }
        assertTrue(r.hasLine("add element ip kube-proxy service-ips { 10.105.101.118 . tcp . 80 : goto service-VSI2YVQZ-demo/hello/tcp/http }"));
        assertTrue(r.hasLine("add element ip kube-proxy service-nodeports { tcp . 30080 : goto external-BJ5L76QF-demo/hello-np/tcp/http }"));
        assertTrue(r.hasLine("add element ip kube-proxy service-nodeports { tcp . 31950 : goto external-WRGIWGFD-demo/hello-lb/tcp/http }"));
        assertTrue(r.hasLine("add rule ip kube-proxy service-VSI2YVQZ-demo/hello/tcp/http meta l4proto tcp dnat ip addr . port to "
                + "numgen random mod 3 map { 0 : 172.20.172.15 . 8080 , 1 : 172.20.172.17 . 8080 , 2 : 172.20.211.48 . 8080 }"), r.out());
        assertTrue(r.hasLine("add rule ip kube-proxy service-2QRHZV4L-default/kubernetes/tcp/https meta l4proto tcp dnat ip addr . port to "
                + "numgen random mod 1 map { 0 : 192.168.10.17 . 6443 }"));
    }

    @Test
    void legacyApiHasItsHandWrittenEndpointsNotARejectEntry() {
        Run flat = renderExamples();
        assertTrue(flat.hasLine("add element ip kube-proxy flat-endpoints-tcp-2 { 10.110.229.142 . 80 . 0 comment \"demo/legacy-api:http\" : 192.168.10.40 . 8080 }"), flat.out());
        assertTrue(flat.hasLine("add element ip kube-proxy flat-endpoints-tcp-2 { 10.110.229.142 . 80 . 1 comment \"demo/legacy-api:http\" : 192.168.10.41 . 8080 }"), flat.out());
        assertFalse(flat.out().contains("no-endpoint-services { 10.110.229.142"), flat.out());

        Run r = renderExamples("--table-layout", "fast");

        assertTrue(r.hasLine("add element ip kube-proxy service-ips { 10.110.229.142 . tcp . 80 : goto service-UYL3EFSC-demo/legacy-api/tcp/http }"));
        assertTrue(r.out().contains("service-UYL3EFSC-demo/legacy-api/tcp/http meta l4proto tcp numgen random mod 2 0 dnat to 192.168.10.40:8080\n"
                + "add rule ip kube-proxy service-UYL3EFSC-demo/legacy-api/tcp/http meta l4proto tcp dnat to 192.168.10.41:8080\n"), r.out());
        assertFalse(r.out().contains("legacy-api:http\" : goto reject-chain"));
        assertFalse(r.lines().stream().anyMatch(l -> l.startsWith("add element ip kube-proxy no-endpoint-services")), r.out());
    }

    @Test
    void headlessAndExternalNameServicesProduceNothing() {
        Run r = renderExamples();

        assertEquals(0, r.exit());
        assertFalse(r.out().contains("hello-headless"));
        assertFalse(r.out().contains("registry"));
    }

    @Test
    void nodeIpZoneAndLocalityComeFromTheNodeObject() {
        Run r = renderExamples("--table-layout", "fast");

        // primary nodeport address: the Node's InternalIP; no IPv6 node IP, so the ip6 table matches every local address
        assertTrue(r.hasLine("add element ip kube-proxy nodeport-ips { 192.168.10.20 }"));
        assertTrue(r.hasLine("add rule ip6 kube-proxy services fib daddr type local ip6 daddr != ::1 meta l4proto . th dport vmap @service-nodeports"));
        // endpoints with nodeName k8s-node-1 are local: hello-local and hello-near (forNodes hints) keep only 172.20.211.48
        assertTrue(r.out().contains("local-4H2GLPZP-demo/hello-local/tcp/http meta l4proto tcp dnat to 172.20.211.48:8080\n"));
        assertTrue(r.out().contains("service-AKGLRN4Y-demo/hello-near/tcp/http meta l4proto tcp dnat to 172.20.211.48:8080\n"));
    }

    @Test
    void nodeIpFlagOverridesTheNodeObject() {
        Run r = renderExamples("--node-ip", "192.168.10.99,fd00:10::20");

        assertTrue(r.hasLine("add element ip kube-proxy nodeport-ips { 192.168.10.99 }"), r.out());
        assertTrue(r.hasLine("add element ip6 kube-proxy nodeport-ips { fd00:10::20 }"), r.out());
        assertFalse(r.out().contains("192.168.10.20 }"));
    }

    @Test
    void bothTablesIpFirstAndIpFamilySelectsOne() {
        Run both = renderExamples("--table-layout", "fast");
        int ip = both.out().indexOf("add table ip kube-proxy");
        int ip6 = both.out().indexOf("add table ip6 kube-proxy");
        assertTrue(ip == 0 && ip6 > ip, "ip table first, then ip6");
        assertTrue(both.hasLine("add element ip6 kube-proxy service-ips { fd00:10:96::100a . tcp . 80 : goto service-77WF6TB4-demo/hello-dual/tcp/http }"));

        Run v4 = renderExamples("--ip-family", "ipv4");
        assertFalse(v4.out().contains("ip6 kube-proxy"));
        Run v6 = renderExamples("--ip-family", "IPv6");
        assertTrue(v6.out().startsWith("add table ip6 kube-proxy"), v6.out());
        assertFalse(v6.out().contains("add table ip kube-proxy"));
    }

    @Test
    void zoneOfTheNodeSelectsPreferSameZoneEndpoints(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("all.yaml"), """
                apiVersion: v1
                kind: Node
                metadata: {name: n1, labels: {topology.kubernetes.io/zone: zone-b}}
                status: {addresses: [{type: InternalIP, address: 192.0.2.1}]}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: z, namespace: t}
                spec: {clusterIP: 10.96.0.50, trafficDistribution: PreferSameZone, ports: [{name: p, port: 80}]}
                ---
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata: {name: z-1, namespace: t, labels: {kubernetes.io/service-name: z}}
                addressType: IPv4
                ports: [{name: p, port: 8080}]
                endpoints:
                  - {addresses: [10.1.0.1], hints: {forZones: [{name: zone-a}]}}
                  - {addresses: [10.1.0.2], hints: {forZones: [{name: zone-b}]}}
                """);

        Run r = run("render", "--manifests", dir.toString(), "--hostname-override", "n1", "--ip-family", "ipv4", "--table-layout", "fast");

        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("meta l4proto tcp dnat to 10.1.0.2:8080\n"), r.out());
        Run flat = run("render", "--manifests", dir.toString(), "--hostname-override", "n1", "--ip-family", "ipv4");
        assertTrue(flat.hasLine("add element ip kube-proxy flat-endpoints-tcp-1 { 10.96.0.50 . 80 . 0 comment \"t/z:p\" : 10.1.0.2 . 8080 }"), flat.out());
    }

    @Test
    void skippedObjectsAreOneWarningLineEachOnStderr(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("bad.yaml"), """
                apiVersion: v1
                kind: Service
                metadata: {name: typed, namespace: t}
                spec: {clusterIP: 10.96.0.50, ports: [{name: p, port: "80"}]}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: badip, namespace: t}
                spec: {clusterIP: 10.96.0.51, externalIPs: [not-an-ip], ports: [{name: p, port: 80}]}
                """);
        Files.writeString(dir.resolve("broken.yaml"), "kind: Service\nmetadata: [\n");

        Run r = run("render", "--manifests", dir.toString(), "--hostname-override", "n1");

        assertEquals(0, r.exit());
        List<String> lines = r.err().lines().toList();
        assertTrue(lines.stream().allMatch(l -> l.startsWith("warning: ")), r.err());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("warning: skipped kind=Service object=\"t/typed\" field=spec.ports[0].port reason=")), r.err());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("warning: skipped kind=Service object=\"t/badip\" field=spec.externalIPs reason=")), r.err());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("warning: skipped kind=- object=- field=- reason=\"malformed at line")
                && l.contains("broken.yaml") && l.endsWith("document=1")), r.err());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("warning: no Node named \"n1\"")), r.err());
        // the valid parts still render, and stdout carries nothing but the script
        assertTrue(r.hasLine("add element ip kube-proxy cluster-ips { 10.96.0.51 }"), r.out());
        assertTrue(r.lines().stream().allMatch(l -> l.startsWith("add ")), r.out());
    }

    /** The default layout writes the cascade; everything but the policy chains' rules is upstream's, line for line. */
    @Test
    void flatLayoutIsTheDefaultAndFastChangesOnlyPolicyChainRules() {
        assertEquals(io.nftproxy.render.TableLayout.DEFAULT.cliName(), NodeOptions.DEFAULT_LAYOUT);
        Run byDefault = renderExamples();
        Run flat = renderExamples("--table-layout", "FLAT");
        Run fast = renderExamples("--table-layout", "fast");
        Run upstream = renderExamples("--table-layout", "upstream");
        assertEquals(0, byDefault.exit(), byDefault.err());
        assertEquals(byDefault.out(), flat.out());
        assertTrue(flat.hasLine("add element ip kube-proxy service-ips { 10.105.101.118 . tcp . 80 comment \"demo/hello:http\" : continue }"), flat.out());
        assertFalse(flat.out().contains("add chain ip kube-proxy service-VSI2YVQZ-demo/hello/tcp/http"), "hello is simple: no chain");
        assertTrue(flat.hasLine("add chain ip kube-proxy service-4MXLGZVK-demo/hello-sticky/tcp/http"), "affinity keeps its chains");
        String hello = "add rule ip kube-proxy service-VSI2YVQZ-demo/hello/tcp/http meta l4proto tcp ";
        assertTrue(fast.hasLine(hello + "numgen random mod 3 0 dnat to 172.20.172.15:8080"), fast.out());
        assertTrue(fast.hasLine(hello + "numgen random mod 2 0 dnat to 172.20.172.17:8080"), fast.out());
        assertTrue(fast.hasLine(hello + "dnat to 172.20.211.48:8080"), fast.out());
        assertFalse(fast.out().contains(" map {"), "no anonymous map in the fast layout");
        assertTrue(upstream.out().contains(" map {"));
        assertEquals(withoutPolicyRules(upstream), withoutPolicyRules(fast));
        assertTrue(run("render", "--help").out().contains("--table-layout=flat|fast|upstream"));
    }

    private static List<String> withoutPolicyRules(Run r) {
        return r.lines().stream().filter(l -> !l.matches("add rule ip6? kube-proxy (service|local)-[A-Z0-9]{8}-\\S+ .*")).toList();
    }

    @Test
    void badFlagValuesExitWithTwoAndNameTheFlag() {
        record Case(String flag, String value, String expected) {}
        for (Case c : List.of(
                new Case("--cluster-cidr", "10.0.0/8", "Invalid value for option '--cluster-cidr'"),
                new Case("--node-ip", "192.168.10.300", "Invalid value for option '--node-ip'"),
                new Case("--node-ip", "192.168.10.1,192.168.10.2", "at most one address per family"),
                new Case("--node-ip", "127.0.0.1", "not unspecified, loopback or multicast"),
                new Case("--node-ip", "0.0.0.0", "not unspecified, loopback or multicast"),
                new Case("--node-ip", "ff02::1", "not unspecified, loopback or multicast"),
                new Case("--nodeport-addresses", "primary,10.0.0.0/8", "'primary' alone, or CIDRs"),
                new Case("--nodeport-addresses", "lan", "Invalid value: nodePortAddresses (--nodeport-addresses): invalid value \"lan\""),
                new Case("--masquerade-bit", "32", "Invalid value: nftables.masqueradeBit (--masquerade-bit): invalid value \"32\"; allowed: an integer 0..31"),
                new Case("--masquerade-bit", "x", "Invalid value for option '--masquerade-bit'"),
                new Case("--ip-family", "ipv5", "expected one of [ipv4, ipv6, both]"),
                new Case("--table-layout", "quick", "Invalid value for option '--table-layout': \"quick\" is not a table layout (allowed: upstream, fast, flat)"))) {
            Run r = run("render", "--manifests", EXAMPLES.toString(), "--hostname-override", "k8s-node-1", c.flag(), c.value());
            assertEquals(ExitCodes.USAGE, r.exit(), c.toString());
            assertTrue(r.err().contains(c.expected()), c + " -> " + r.err());
            assertEquals("", r.out(), c.toString());
        }
        Run badName = run("render", "--manifests", EXAMPLES.toString(), "--hostname-override", "Not_A_Name");
        assertEquals(ExitCodes.USAGE, badName.exit());
        assertTrue(badName.err().contains("Invalid value: hostnameOverride (--hostname-override): invalid value \"Not_A_Name\"; allowed: a DNS-1123 subdomain"),
                badName.err());
        Run missing = run("render", "--hostname-override", "k8s-node-1");
        assertEquals(ExitCodes.USAGE, missing.exit());
        assertTrue(missing.err().contains("--manifests"), missing.err());
        assertEquals(ExitCodes.USAGE, run("render", "--manifests", "x", "--hostname-override", "n", "--no-such-flag").exit());
        assertEquals(ExitCodes.USAGE, run().exit());
    }

    /** The detector flags of run, on render: what run would program, refused where run refuses, in the same words. */
    @Test
    void theLocalDetectorFlagsRenderWhatRunProgramsAndAreValidatedAsRunValidatesThem(@TempDir Path dir) {
        assertFalse(renderExamples().out().contains("iifname"), "ClusterCIDR by default");
        Run bridge = renderExamples("--detect-local-mode=BridgeInterface", "--pod-bridge-interface", "cbr0");
        assertEquals(ExitCodes.OK, bridge.exit(), bridge.err());
        assertTrue(bridge.out().contains("ip daddr @cluster-ips iifname != \"cbr0\" mark set mark or 0x4000"), bridge.out());
        Run prefix = renderExamples("--detect-local-mode", "InterfaceNamePrefix", "--pod-interface-name-prefix", "veth");
        assertEquals(ExitCodes.OK, prefix.exit(), prefix.err());
        assertTrue(prefix.out().contains("iifname != \"veth*\""), prefix.out());

        for (List<String> bad : List.of(List.of("--detect-local-mode=BridgeInterface"),
                List.of("--detect-local-mode=Nodes"),
                List.of("--detect-local-mode=InterfaceNamePrefix", "--pod-interface-name-prefix", "ve/th"))) {
            Run r = renderExamples(bad.toArray(String[]::new));
            assertEquals(ExitCodes.USAGE, r.exit(), bad + " -> " + r.err());
            assertEquals("", r.out());
            List<String> runArgs = new ArrayList<>(List.of("run", "--write-config-to", dir.resolve("c.yaml").toString(),
                    "--hostname-override", "k8s-node-1"));
            runArgs.addAll(bad);
            Run daemon = run(runArgs.toArray(String[]::new));
            assertEquals(ExitCodes.USAGE, daemon.exit(), bad + " -> " + daemon.err());
            String why = daemon.err().strip().substring("nftproxy: invalid configuration: ".length());
            assertTrue(r.err().contains(why), "render says what run says (" + why + "): " + r.err());
        }
    }

    @Test
    void aMissingManifestDirectoryExitsWithOne(@TempDir Path dir) throws IOException {
        Run r = run("render", "--manifests", dir.resolve("nope").toString(), "--hostname-override", "n1");
        assertEquals(ExitCodes.INPUT_UNREADABLE, r.exit());
        assertTrue(r.err().contains("no such directory"), r.err());

        Path file = Files.writeString(dir.resolve("file.yaml"), "");
        assertEquals(ExitCodes.INPUT_UNREADABLE, run("render", "--manifests", file.toString(), "--hostname-override", "n1").exit());
    }

    /** A refused port is not waited out for --request-timeout: the command fails at once, naming the server and the cause. */
    @Test
    void aRefusedApiServerFailsAtOnceNamingTheCause(@TempDir Path dir) throws IOException {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters:
                - {name: c, cluster: {server: "http://127.0.0.1:%d"}}
                users:
                - {name: u, user: {token: not-a-real-token}}
                contexts:
                - {name: x, context: {cluster: c, user: u}}
                current-context: x
                """.formatted(port));
        long t0 = System.nanoTime();
        Run r = run("render", "--kubeconfig", kubeconfig.toString(), "--hostname-override", "n1");
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(ExitCodes.INPUT_UNREADABLE, r.exit(), r.err());
        assertTrue(ms < 5_000, "took " + ms + " ms of the 60 s --request-timeout");
        assertTrue(r.err().contains("--kubeconfig " + kubeconfig + ": API server http://127.0.0.1:" + port
                + " unusable: connection refused or unreachable"), r.err());
    }

    /**
     * A kubeconfig whose current-context names no context: one line naming the file, the name and the contexts it
     * has, instead of a connection error about https://kubernetes.default.svc (issue 24). No server is asked.
     */
    @Test
    void aKubeconfigWhoseContextDoesNotExistIsOneLineNamingWhatItHas(@TempDir Path dir) throws IOException {
        Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "https://192.0.2.1:6443"}}]
                contexts: [{name: admin@c, context: {cluster: c, user: u}}, {name: proxy@c, context: {cluster: c, user: u}}]
                current-context: prod
                users: [{name: u, user: {token: t}}]
                """);
        Run r = run("render", "--kubeconfig", kubeconfig.toString(), "--hostname-override", "n1");
        assertEquals(ExitCodes.INPUT_UNREADABLE, r.exit());
        assertEquals("nftproxy: --kubeconfig " + kubeconfig + ": current-context \"prod\" is not one of its contexts (admin@c, proxy@c)",
                r.err().strip());
    }

    @Test
    void helpShowsDefaultsAndExamples() {
        Run r = run("render", "--help");

        assertEquals(0, r.exit());
        assertTrue(r.out().contains("Default: primary."), r.out());
        assertTrue(r.out().contains("Default: both."));
        assertTrue(r.out().contains("Default: 14 (mark 0x4000)."));
        assertTrue(r.out().contains("Examples:"));
        assertTrue(r.out().contains("Example: --cluster-cidr 172.20.0.0/16"));
    }

    /** The rendered script must load into a real kernel. Runs only as root with nft and unshare; skipped otherwise. */
    @Test
    void theKernelAcceptsTheRenderedScript() throws Exception {
        String reason = kernelUnavailable();
        if (reason != null) System.err.println("SKIPPED theKernelAcceptsTheRenderedScript: " + reason);
        Assumptions.assumeTrue(reason == null, reason);

        Run r = renderExamples();
        assertEquals(0, r.exit(), r.err());
        // A fresh network namespace: the host's ruleset is never touched.
        Process p = new ProcessBuilder("unshare", "--net", "sh", "-c", "nft -f - && nft list table ip kube-proxy >/dev/null"
                + " && nft list table ip6 kube-proxy >/dev/null").redirectErrorStream(true).start();
        p.getOutputStream().write(r.out().getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "nft timed out");
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), output);
    }

    private static String kernelUnavailable() {
        if (!"root".equals(System.getProperty("user.name"))) return "needs root (to create a network namespace)";
        for (String tool : List.of("nft", "unshare")) {
            boolean found = Files.isExecutable(Path.of("/usr/sbin", tool)) || Files.isExecutable(Path.of("/usr/bin", tool))
                    || Files.isExecutable(Path.of("/sbin", tool));
            if (!found) return "needs " + tool + " on the PATH";
        }
        try {
            Process p = new ProcessBuilder("unshare", "--net", "true").redirectErrorStream(true).start();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) return "cannot create a network namespace";
        } catch (IOException | InterruptedException e) {
            return "cannot run unshare: " + e.getMessage();
        }
        return null;
    }
}
