package io.nftproxy.logging;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.config.DefaultConfiguration;
import org.apache.logging.log4j.core.impl.Log4jLogEvent;
import org.apache.logging.log4j.layout.template.json.JsonTemplateLayout;
import org.apache.logging.log4j.message.ParameterizedMessage;
import org.apache.logging.log4j.message.SimpleMessage;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** JSON logs carry a message's key=value pairs as fields of their own, and its text without them. */
class KeyValueMessageTest {
    private static KeyValueMessage split(String format, Object... params) { return KeyValueMessage.of(format, params, false); }

    @Test
    void pairsBecomeFieldsAndTheTextKeepsTheRest() {
        KeyValueMessage m = split("listed kind={} objects={} resourceVersion={}", "Service", 1000, "4711");
        assertEquals("listed", m.text());
        assertEquals(new LinkedHashMap<>(Map.of("kind", "Service", "objects", "1000", "resourceVersion", "4711")), m.fields());
        assertEquals(List.of("kind", "objects", "resourceVersion"), List.copyOf(m.fields().keySet()), "in the message's order");

        m = split("manifest reload failed dir={} error={}; every object stays as last read until it reads again",
                "/etc/m", "bad YAML at line 3, column 7");
        assertEquals("manifest reload failed; every object stays as last read until it reads again", m.text());
        assertEquals(Map.of("dir", "/etc/m", "error", "bad YAML at line 3, column 7"), m.fields(), "a value with spaces stays whole");

        m = split("API server unusable url={} cause=\"{}\"; retrying", "https://10.0.0.1:6443", "connection refused");
        assertEquals("API server unusable; retrying", m.text());
        assertEquals(Map.of("url", "https://10.0.0.1:6443", "cause", "connection refused"), m.fields());
    }

    @Test
    void placeholdersThatAreNoPairStayInTheText() {
        KeyValueMessage m = split("sync core time={}us services={}", 250, 45000);
        assertEquals("sync core time=250us", m.text(), "a unit after the value: not a pair");
        assertEquals(Map.of("services", "45000"), m.fields());
        m = split("{}: {}, closing the oldest connections", "healthz", "too many");
        assertEquals("healthz: too many, closing the oldest connections", m.text());
        assertEquals(Map.of(), m.fields());
        assertEquals("no placeholder for {}", split("no placeholder for {}").text(), "a missing parameter stays {}");
    }

    @Test
    void theLayoutsOwnFieldsAreNeverShadowed() {
        KeyValueMessage m = split("odd msg={} level={} n={}", "a", "b", 1);
        assertEquals("odd msg=a level=b", m.text());
        assertEquals(Map.of("n", "1"), m.fields());
        KeyValueMessage withException = KeyValueMessage.of("close failed error={}", new Object[] {"EBADF"}, true);
        assertEquals("close failed error=EBADF", withException.text(), "the exception's stack trace is the error field");
        assertEquals(Map.of(), withException.fields());
    }

    /** Through the JSON layout nftproxy configures (nftproxy-log.json), as --logging-format json writes it. */
    @Test
    void theJsonLayoutWritesThePairsAsFields() throws Exception {
        JsonTemplateLayout layout = JsonTemplateLayout.newBuilder().setConfiguration(new DefaultConfiguration())
                .setEventTemplateUri("classpath:nftproxy-log.json").build();
        JsonNode json = JsonMapper.builder().build().readTree(layout.toSerializable(event(new ParameterizedMessage(
                "first sync part={} of={} services={}; next part follows", 2, 5, 9000), null)));
        assertEquals("first sync; next part follows", json.get("msg").asString());
        assertEquals("2", json.get("part").asString());
        assertEquals("5", json.get("of").asString());
        assertEquals("9000", json.get("services").asString());
        assertEquals("INFO", json.get("level").asString());
        assertFalse(json.has("fields"), json.toString());

        JsonNode plain = JsonMapper.builder().build().readTree(layout.toSerializable(event(new SimpleMessage("stopped; nftables rules left in place"), null)));
        assertEquals("stopped; nftables rules left in place", plain.get("msg").asString());
        assertEquals(List.of("time", "level", "logger", "thread", "msg"), List.copyOf(plain.propertyNames()));

        JsonNode failed = JsonMapper.builder().build().readTree(layout.toSerializable(event(new ParameterizedMessage(
                "close failed error={} fd={}", "EBADF", 7), new IllegalStateException("boom"))));
        assertEquals("close failed error=EBADF", failed.get("msg").asString());
        assertEquals("7", failed.get("fd").asString());
        assertTrue(failed.get("error").asString().contains("IllegalStateException: boom"), failed.toString());
    }

    private static LogEvent event(org.apache.logging.log4j.message.Message m, Throwable t) {
        return Log4jLogEvent.newBuilder().setLoggerName("io.nftproxy.test").setLevel(Level.INFO).setMessage(m)
                .setThrown(t).setThreadName("main").setTimeMillis(0).build();
    }
}
