package io.nftproxy.render;

import io.nftproxy.TestClusters;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceObject;

import java.util.List;
import java.util.Map;

import static io.nftproxy.TestClusters.NODE;
import static io.nftproxy.TestClusters.OTHER_NODE;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;

/**
 * A corpus of inputs an API server would normally refuse, as a manifest file, a fake or aggregated API server, or
 * another API version could still deliver them. Each must be skipped or neutralised, and none may reach nft text.
 * Two good services ride along to prove one bad object never affects another.
 */
public final class HostileInputs {
    /** Strings that must never appear anywhere in a rendered script. */
    public static final List<String> FORBIDDEN = List.of(
            "delete table", "flush ruleset", "injected", "localhost", "example.com", "\u00fcn\u00ef", "hello world",
            "x".repeat(200), "drop;", "ICMP", "65536", "70000", "fd00::bad", "1.2.3.4.5", "/33", "\r");

    private HostileInputs() {}

    public static ClusterSnapshot snapshot() {
        TestClusters c = TestClusters.cluster();
        // Names that would end a statement, open a string or start a comment if copied into nft text.
        c.service(svc("evil", "svc;delete table ip kube-proxy").clusterIP("172.30.9.1").port("http", "TCP", 80).build());
        c.service(svc("ns\"; add chain ip kube-proxy injected; #", "svc").clusterIP("172.30.9.2").port("http", "TCP", 80).build());
        c.service(svc("evil", "newline").clusterIP("172.30.9.3").port("http\nadd chain ip kube-proxy injected", "TCP", 80)
                .port("ok", "TCP", 81).build());
        c.service(svc("evil", "x".repeat(200)).clusterIP("172.30.9.4").port("http", "TCP", 80).build());
        c.service(svc("evil", "\u00fcn\u00efc\u00f8d\u00e9").clusterIP("172.30.9.5").port("http", "TCP", 80).build());
        // Hostnames and junk where addresses belong: nft would resolve a hostname inside the sync.
        c.service(svc("evil", "hostname-ip").clusterIP("localhost").port("http", "TCP", 80).build());
        c.service(svc("evil", "injected-ip").clusterIP("10.0.0.1; flush ruleset").port("http", "TCP", 80).build());
        c.service(svc("evil", "bad-externals").clusterIP("172.30.9.6").externalIP("example.com").externalIP("1.2.3.4.5")
                .externalIP("192.0.2.66").lbIngress("203.0.113.9\n").sourceRange("10.0.0.0/33").sourceRange("198.51.100.0/24 }")
                .type("LoadBalancer").port("http", "TCP", 80, 30099).build());
        // Ports and protocols out of range.
        c.service(svc("evil", "ports").clusterIP("172.30.9.7").port("icmp", "ICMP", 80).port("zero", "TCP", 0)
                .port("big", "TCP", 65536).port("np", "TCP", 82, 70000).port("good", "UDP", 83).build());
        c.service(svc("evil", "affinity").clusterIP("172.30.9.8").port("http", "TCP", 80).clientIPAffinity(999999).build());
        c.service(svc("evil", "policy").clusterIP("172.30.9.9").port("http", "TCP", 80).externalPolicy("Local; drop;").build());
        // Slices: wrong family, bad addresses, bad names, labels with spaces.
        c.slice(slice("evil", "svc-v6-in-v4", "s1").port("http", "TCP", 8080).ready("fd00::bad", NODE).build());
        c.service(svc("evil", "svc-v6-in-v4").clusterIP("172.30.9.10").port("http", "TCP", 80).build());
        c.slice(slice("evil", "hello world", "s2").port("http", "TCP", 8080).ready("10.180.9.1", NODE).build());
        c.slice(slice("evil", "affinity", "s3").port("http;drop;", "TCP", 8080).port("http", "TCP", 65536)
                .port("http", "TCP", 8080).ready("10.180.9.2", "node\nname").ready("localhost", NODE)
                .ready("0.0.0.0", NODE).ready("127.0.0.1", NODE).ready("169.254.1.1", NODE).ready("010.180.009.003", OTHER_NODE).build());
        c.slice(new EndpointSliceObject(new ObjectMeta("evil", "no-label", Map.of(), Map.of(), false), "IPv4",
                List.of(new EndpointSliceObject.PortSpec("http", "TCP", 8080)), List.of()));
        c.slice(new EndpointSliceObject(new ObjectMeta("evil", "nil-port-name", Map.of(EndpointSliceObject.SERVICE_NAME_LABEL, "policy"), Map.of(), false), "IPv4",
                List.of(new EndpointSliceObject.PortSpec(null, "TCP", 8080)), List.of()));
        c.serviceCidr("10.96.0.0/12; flush ruleset", "172.30.0.0/16");
        // The good ones.
        c.service(svc("good", "web").clusterIP("172.30.8.1").port("http", "TCP", 80).build());
        c.slice(slice("good", "web", "web-1").port("http", "TCP", 8080).ready("10.180.8.1", OTHER_NODE).build());
        c.service(new ServiceObject(ObjectMeta.of("good", "dns"), "ClusterIP", "172.30.8.10", null, null,
                List.of(new ServiceObject.PortSpec("dns", "UDP", 53, "53", null)), null, null, null, null, null, null, null, null, null));
        return c.snapshot();
    }
}
