package io.nftproxy.render;

import io.nftproxy.TestClusters;
import io.nftproxy.diff.Differ;
import io.nftproxy.net.IpFamily;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.nft.Command;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.NftSyntax;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Verb;
import io.nftproxy.service.ServicePortName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;

import static io.nftproxy.TestClusters.cluster;
import static io.nftproxy.TestClusters.slice;
import static io.nftproxy.TestClusters.svc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * issue 24: {@code nft list table ip kube-proxy | grep ns/name} finds a Service in every layout. The flat layout
 * writes a simple port as elements only, so each of them carries kube-proxy's element comment {@code ns/svc:port}.
 */
class ElementCommentTest {
    private static final List<String> COMMENTED = List.of("service-ips", "service-nodeports", "no-endpoint-services",
            "no-endpoint-nodeports", "flat-");

    static Stream<Arguments> scenariosByLayout() {
        return Stream.of(TableLayout.values()).flatMap(l -> GoldenScenarios.all().stream().map(s -> Arguments.of(l, s)));
    }

    /** Each port kept is named in its table: by its element comment, or by a chain named after it. */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("scenariosByLayout")
    void everyServicePortIsFoundByItsName(TableLayout layout, GoldenScenarios.Scenario s) {
        Renderer.Rendering r = new Renderer(layout).render(s.snapshot(), s.node());
        for (IpFamily f : IpFamily.values()) {
            String text = Transaction.creating(r.table(f)).script(Capabilities.baseline());
            for (ServicePortName n : r.state(f).servicePorts().keySet()) {
                assertTrue(text.contains("comment \"" + n.elementComment() + "\"") || text.contains("-" + n.chainBase() + " "),
                        () -> s.name() + " " + f + ": nothing in the table names " + n);
            }
        }
    }

    /**
     * In flat, every element of the dispatch and flat sets and maps says whose it is, but for a chain port's
     * {@code goto} elements, which keep kube-proxy's form: their target chain is named after the port.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.nftproxy.render.GoldenTest#scenarios")
    void everyFlatDispatchElementCarriesItsPortsComment(GoldenScenarios.Scenario s) {
        Renderer.Rendering r = new Renderer(TableLayout.FLAT).render(s.snapshot(), s.node());
        for (IpFamily f : IpFamily.values()) {
            List<String> comments = r.state(f).servicePorts().keySet().stream().map(ServicePortName::elementComment).toList();
            for (Element e : r.table(f).allElements()) {
                if (COMMENTED.stream().noneMatch(e.set()::startsWith) || (e.value() != null && e.value().target() != null)) continue;
                assertTrue(e.comment() != null && comments.contains(e.comment()), () -> s.name() + ": " + e);
            }
        }
    }

    /**
     * A namespace, name and port name of 63 bytes each make a 191-byte comment; the model holds it cut as nft stores
     * it (128 bytes), so the table read back equals the model instead of differing at every read-back.
     */
    @Test
    void longNamesAreCutAsNftStoresThem() {
        String ns = "n".repeat(63), name = "s".repeat(63), port = "p".repeat(63);
        TestClusters c = cluster().with(svc(ns, name).clusterIP("172.30.0.1").nodePort(port, "TCP", 80, 30080))
                .with(svc(ns, "empty").clusterIP("172.30.0.2").port(port, "TCP", 80))
                .with(slice(ns, name, "a").port(port, "TCP", 8080).ready("10.180.0.1", "elsewhere"));
        for (TableLayout layout : TableLayout.values()) {
            TableContent t = new Renderer(layout).render(c.snapshot(), TestClusters.node()).table(IpFamily.IPV4);
            List<Element> commented = t.allElements().stream().filter(e -> e.comment() != null).toList();
            assertFalse(commented.isEmpty(), layout + ": the no-endpoint port's element at least");
            for (Element e : commented) {
                assertTrue(e.comment().getBytes(StandardCharsets.UTF_8).length <= 128, e.comment());
                assertEquals(NftSyntax.comment(e.comment()), e.comment(), "the model holds what nft prints back");
                assertTrue(e.comment().startsWith(ns + "/"), e.comment());
            }
        }
    }

    /** A comment is payload: a port renamed on the same number rewrites its elements; the same table sends nothing. */
    @Test
    void aChangedCommentRewritesTheElementAndAnEqualOneSendsNothing() {
        TableContent http = flat("http");
        TableContent web = flat("web");
        assertTrue(Differ.diff(http, flat("http")).isEmpty(), "equal comments: nothing to send");
        Transaction tx = Differ.diff(http, web).transaction();
        long flatElements = http.allElements().stream().filter(e -> e.comment() != null).count();
        assertEquals(13, flatElements, "per address (2): service-ips, flat-ips, 2 endpoints; the external IP; per NodePort: 2 sets, 2 endpoints");
        long deletes = tx.commands().stream().filter(x -> x.verb() == Verb.DELETE && x.object() instanceof Element).count();
        long adds = tx.commands().stream().filter(x -> x.verb() == Verb.ADD && x.object() instanceof Element).count();
        assertEquals(flatElements, deletes, tx.script(Capabilities.baseline()));
        assertEquals(flatElements, adds, tx.script(Capabilities.baseline()));
        for (Command x : tx.commands()) {
            if (x.verb() == Verb.ADD && x.object() instanceof Element e) assertEquals("demo/hello:web", e.comment());
        }
    }

    private static TableContent flat(String portName) {
        TestClusters c = cluster().with(svc("demo", "hello").clusterIP("172.30.0.1").nodePort(portName, "TCP", 80, 30080)
                        .externalIP("192.0.2.7"))
                .with(slice("demo", "hello", "a").port(portName, "TCP", 8080).ready("10.180.0.1", "elsewhere")
                        .ready("10.180.0.2", "elsewhere"));
        return new Renderer(TableLayout.FLAT).render(c.snapshot(), TestClusters.node()).table(IpFamily.IPV4);
    }
}
