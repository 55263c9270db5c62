package io.nftproxy.source.api;

import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ApiServerCipherOrderTest {
    @Test
    void chaChaSuitesComeFirstAndNoSuiteIsDropped() throws Exception {
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, null, null);
        List<String> defaults = List.of(tls.getDefaultSSLParameters().getCipherSuites());

        SSLParameters p = ApiServer.chaChaFirst(tls);
        List<String> ordered = List.of(p.getCipherSuites());

        assertEquals(Set.copyOf(defaults), Set.copyOf(ordered));
        assertEquals(defaults.size(), ordered.size());
        long chacha = ordered.stream().filter(s -> s.contains("_CHACHA20_")).count();
        assertTrue(chacha >= 1, "the runtime offers ChaCha20-Poly1305: " + ordered);
        assertTrue(ordered.subList(0, (int) chacha).stream().allMatch(s -> s.contains("_CHACHA20_")), ordered.toString());
        assertEquals("TLS_CHACHA20_POLY1305_SHA256", ordered.get(0));
        // The rest keep the runtime's own order (the sort is stable).
        assertEquals(defaults.stream().filter(s -> !s.contains("_CHACHA20_")).toList(), ordered.subList((int) chacha, ordered.size()));
        assertFalse(ordered.subList((int) chacha, ordered.size()).stream().anyMatch(s -> s.contains("_CHACHA20_")));
    }
}
