package io.nftproxy.render;

import io.nftproxy.nft.NftSyntax;

import io.nftproxy.service.Endpoint;
import io.nftproxy.net.Protocol;
import io.nftproxy.service.ServicePortName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChainNamesTest {
    @ParameterizedTest
    @CsvSource({
            "ns1/svc1/tcp/p80, ULMVA6XW",
            "ns2/svc2/tcp/p80, 42NFTM6N",
            "ns3/svc3/tcp/p80, 4AT6LBPK",
            "ns4/svc4/tcp/p80, LAUZTJTB",
            "ns5/svc5/tcp/p80, HVFWP5L3",
            "ns2/svc2/tcp/p8080, MHHHYRWA",
            "ns5/svc5/tcp/p80__10.180.0.3/80, GTK6MW7G",
            "ns1/svc1/tcp/p80__10.180.0.1/80, 5OJB2KTY",
            "testing/service/tcp/http, P4ZYZVCF",
            "testing/service/tcp/https, LZBRENCP",
            "testing/service/tcp/http__10.180.0.1/80, JO2XBXZR",
            "testing/service/tcp/http__10.180.0.2/80, 5S6H3H22",
            "testing/service/tcp/http__fd80.abcd.12..a1b2.c3d4.e5f6.9999/80, U7E2ET36",
            "default/kubernetes/tcp/https, 2QRHZV4L",
            "demo/hello/tcp/http, VSI2YVQZ",
            "demo/hello-np/tcp/http, BJ5L76QF",
            "demo/hello-lb/tcp/http, WRGIWGFD",
            "kube-system/kube-dns/udp/dns, FY5PMXPG",
    })
    void hashesMatchUpstream(String base, String hash) {
        assertEquals(hash, ChainNames.hash(base));
    }

    @Test
    void serviceChainNamesHavePrefixHashAndBase() {
        ServicePortName n = new ServicePortName("demo", "hello", "http", Protocol.TCP);
        assertEquals("service-VSI2YVQZ-demo/hello/tcp/http", ChainNames.service(n));
        assertEquals("external-VSI2YVQZ-demo/hello/tcp/http", ChainNames.external(n));
        assertEquals("local-VSI2YVQZ-demo/hello/tcp/http", ChainNames.local(n));
        assertEquals("firewall-VSI2YVQZ-demo/hello/tcp/http", ChainNames.firewall(n));
    }

    @Test
    void unnamedPortEndsWithSlash() {
        ServicePortName n = new ServicePortName("ns", "svc", "", Protocol.UDP);
        assertTrue(ChainNames.service(n).endsWith("-ns/svc/udp/"));
    }

    @Test
    void ipv6EndpointIsCanonicalisedAndColonsBecomeDots() {
        // The address is re-serialised (RFC 5952, as Go's net.IP.String does) before it is hashed, so the
        // API's spelling cannot change the chain name: a single zero group stays "0", a longer run becomes "::".
        ServicePortName n = new ServicePortName("testing", "service", "http", Protocol.TCP);
        Endpoint e = new Endpoint(io.nftproxy.net.IpAddress.parse("FD80:abcd:0012:0:0:c3d4:e5f6:9999"), 80,
                true, true, false, false, null, null, null);
        String base = "testing/service/tcp/http__fd80.abcd.12..c3d4.e5f6.9999/80";
        assertEquals("endpoint-" + ChainNames.hash(base) + "-" + base, ChainNames.endpoint(n, e));
        Endpoint single = new Endpoint(io.nftproxy.net.IpAddress.parse("fd80:abcd:12::a1b2:c3d4:e5f6:9999"), 80,
                true, true, false, false, null, null, null);
        assertTrue(ChainNames.endpoint(n, single).endsWith("__fd80.abcd.12.0.a1b2.c3d4.e5f6.9999/80"));
    }

    @Test
    void longBasesAreTruncatedTo240BytesWithEllipsis() {
        String ns = "a".repeat(63), svc = "b".repeat(63), port = "c".repeat(63);
        ServicePortName n = new ServicePortName(ns, svc, port, Protocol.TCP);
        Endpoint e = new Endpoint(io.nftproxy.net.IpAddress.parse("fd80:abcd:12:3456:789a:bcde:f012:3456"), 65535,
                true, true, false, false, null, null, null);
        String base = ChainNames.hashAndTruncate(ChainNames.endpointBase(n, e));
        assertEquals(ChainNames.BASE_MAX, base.length());
        assertTrue(base.endsWith("..."));
        assertTrue(ChainNames.endpoint(n, e).length() <= NftSyntax.MAX_NAME_BYTES);
        assertEquals(base.substring(0, 8), ChainNames.hash(ChainNames.endpointBase(n, e)));
    }

    /** The tracer names a chain port's Service from its chain: only our own names, with a hash that matches. */
    @Test
    void aPortChainNamesItsServicePortAndNothingElseDoes() {
        ServicePortName n = new ServicePortName("demo", "hello", "http", Protocol.TCP);
        ServicePortName unnamed = new ServicePortName("ns4", "svc4", "", Protocol.UDP);
        for (String chain : java.util.List.of(ChainNames.service(n), ChainNames.local(n), ChainNames.external(n), ChainNames.firewall(n))) {
            assertEquals(java.util.Optional.of(n), ChainNames.servicePortOf(chain), chain);
        }
        assertEquals(java.util.Optional.of(unnamed), ChainNames.servicePortOf(ChainNames.service(unnamed)));
        assertEquals(java.util.Optional.empty(), ChainNames.servicePortOf("services"));
        assertEquals(java.util.Optional.empty(), ChainNames.servicePortOf("reject-chain"));
        assertEquals(java.util.Optional.empty(), ChainNames.servicePortOf(ChainNames.service(n).replace("hello", "hellp")), "hash mismatch");
    }
}
