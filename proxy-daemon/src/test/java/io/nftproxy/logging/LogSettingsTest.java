package io.nftproxy.logging;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.LoggerContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shipped log4j2.xml (not the test one), in a context of its own, with the properties {@link LogSettings} sets:
 * what each verbosity lets through, and that every line is one logfmt record or one JSON object.
 */
class LogSettingsTest {
    private static final String TRICKY = "a \"quoted\" word, a back\\slash, key=value and a\nsecond line\tand a tab";

    /** Runs {@code body} against a fresh context of the shipped configuration; returns what it wrote to stderr. */
    private static List<String> logged(LogSettings settings, Consumer<LoggerContext> body) throws Exception {
        Map<String, String> saved = new HashMap<>();
        settings.properties().forEach((k, v) -> saved.put(k, System.setProperty(k, v)));
        PrintStream err = System.err;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        URI config = LogSettingsTest.class.getResource("/log4j2.xml").toURI();
        LoggerContext ctx = new LoggerContext("log-settings-test", null, config);
        try {
            System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
            ctx.start();
            body.accept(ctx);
        } finally {
            ctx.stop();
            System.setErr(err);
            saved.forEach((k, v) -> {
                if (v == null) System.clearProperty(k);
                else System.setProperty(k, v);
            });
        }
        return buf.toString(StandardCharsets.UTF_8).lines().toList();
    }

    private static void someEvents(LoggerContext ctx) {
        Logger ours = ctx.getLogger("io.nftproxy.daemon.ProxyDaemon");
        ours.info("started node=k8s-node-1");
        ours.info(TRICKY);
        ours.warn("sync failed", new IllegalStateException("nft said \"no\"\nsecond line"));
    }

    @ParameterizedTest(name = "-v {0}")
    @CsvSource({
            // verbosity, nftproxy INFO, per-sync line, nftproxy DEBUG, library INFO
            "0, true, false, false, false",
            "1, true, false, false, false",
            "2, true, true, false, false",
            "3, true, true, false, false",
            "4, true, true, true, true",
            "9, true, true, true, true",
    })
    void verbosityHasKubeProxysMeaning(int v, boolean info, boolean syncs, boolean debug, boolean libraryInfo) throws Exception {
        logged(new LogSettings(v, LogSettings.Format.TEXT), ctx -> {
            assertEquals(info, ctx.getLogger("io.nftproxy.cli.DaemonLauncher").isEnabled(Level.INFO));
            assertEquals(syncs, ctx.getLogger(LogSettings.SYNCS).isEnabled(Level.INFO));
            assertEquals(debug, ctx.getLogger("io.nftproxy.sync.ProxySync").isEnabled(Level.DEBUG));
            assertEquals(libraryInfo, ctx.getLogger("io.netty.channel.DefaultChannelId").isEnabled(Level.INFO));
            assertTrue(ctx.getLogger("io.netty.channel.DefaultChannelId").isEnabled(Level.WARN));
            // Its one warning (no MAC address: random channel ids) is noise at every verbosity.
            assertFalse(ctx.getLogger("io.netty.util.internal.MacAddressUtil").isEnabled(Level.WARN));
        });
    }

    @Test
    void textLinesAreStrictLogfmt() throws Exception {
        List<String> lines = logged(LogSettings.DEFAULT, LogSettingsTest::someEvents);
        assertEquals(3, lines.size(), String.join("\n", lines));
        List<Map<String, String>> records = lines.stream().map(Logfmt::parse).toList();
        for (Map<String, String> r : records) {
            assertEquals(List.of("time", "level", "logger", "thread", "msg"), List.copyOf(r.keySet()).subList(0, 5), r.toString());
            assertEquals("ProxyDaemon", r.get("logger"));
        }
        assertEquals("started node=k8s-node-1", records.get(0).get("msg"));
        assertEquals("INFO", records.get(0).get("level"));
        assertEquals(TRICKY, records.get(1).get("msg"));
        assertEquals("WARN", records.get(2).get("level"));
        assertTrue(records.get(2).get("error").startsWith("java.lang.IllegalStateException: nft said \"no\"\nsecond line"),
                records.get(2).get("error"));
    }

    @Test
    void jsonFormatIsOneObjectPerLine() throws Exception {
        List<String> lines = logged(new LogSettings(0, LogSettings.Format.JSON), LogSettingsTest::someEvents);
        assertEquals(3, lines.size(), String.join("\n", lines));
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> objects = lines.stream().map(json::readTree).toList();
        for (JsonNode o : objects) {
            assertTrue(o.isObject(), o.toString());
            assertEquals("io.nftproxy.daemon.ProxyDaemon", o.get("logger").stringValue());
            assertTrue(o.get("time").stringValue().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z"), o.toString());
        }
        assertEquals("INFO", objects.get(0).get("level").stringValue());
        assertEquals(TRICKY, objects.get(1).get("msg").stringValue());
        assertFalse(objects.get(1).has("error"));
        assertTrue(objects.get(2).get("error").stringValue().startsWith("java.lang.IllegalStateException: nft said"), objects.get(2).toString());
    }

    @Test
    void formatNamesAreKubeProxys() {
        assertEquals(LogSettings.Format.JSON, LogSettings.Format.parse("json"));
        assertEquals(LogSettings.Format.TEXT, LogSettings.Format.parse("text"));
        assertThrows(IllegalArgumentException.class, () -> LogSettings.Format.parse("JSON"));
    }

    @Test
    void theStrictParserRejectsWhatIsNotLogfmt() {
        for (String bad : List.of("msg=a b", "msg=\"open", "=x", "a=1  b=2", "msg=\"x\"y", "k=\"bad \\q escape\"")) {
            assertThrows(IllegalArgumentException.class, () -> Logfmt.parse(bad), bad);
        }
        assertEquals(Map.of("a", "1", "b", "x y"), Logfmt.parse("a=1 b=\"x y\""));
    }

    /**
     * A strict logfmt reader: {@code key=value} pairs separated by one space; a value is bare (no space, quote or
     * '=') or double-quoted with JSON-style escapes. Anything else is an error, not a best guess.
     */
    static final class Logfmt {
        static Map<String, String> parse(String line) {
            Map<String, String> out = new LinkedHashMap<>();
            int i = 0;
            while (i < line.length()) {
                int eq = line.indexOf('=', i);
                if (eq <= i) throw new IllegalArgumentException("no key at " + i + ": " + line);
                String key = line.substring(i, eq);
                if (!key.matches("[A-Za-z_][A-Za-z0-9_.-]*")) throw new IllegalArgumentException("bad key " + key);
                i = eq + 1;
                StringBuilder v = new StringBuilder();
                if (i < line.length() && line.charAt(i) == '"') {
                    i++;
                    while (true) {
                        if (i >= line.length()) throw new IllegalArgumentException("unterminated value of " + key);
                        char c = line.charAt(i++);
                        if (c == '"') break;
                        if (c < 0x20) throw new IllegalArgumentException("raw control character in " + key);
                        if (c != '\\') {
                            v.append(c);
                            continue;
                        }
                        if (i >= line.length()) throw new IllegalArgumentException("dangling escape in " + key);
                        char e = line.charAt(i++);
                        switch (e) {
                            case '"', '\\', '/' -> v.append(e);
                            case 'n' -> v.append('\n');
                            case 't' -> v.append('\t');
                            case 'r' -> v.append('\r');
                            case 'b' -> v.append('\b');
                            case 'f' -> v.append('\f');
                            case 'u' -> {
                                if (i + 4 > line.length()) throw new IllegalArgumentException("short \\u escape in " + key);
                                v.append((char) Integer.parseInt(line.substring(i, i + 4), 16));
                                i += 4;
                            }
                            default -> throw new IllegalArgumentException("bad escape \\" + e + " in " + key);
                        }
                    }
                } else {
                    while (i < line.length() && line.charAt(i) != ' ') {
                        char c = line.charAt(i++);
                        if (c == '"' || c == '=' || c < 0x20) throw new IllegalArgumentException("unquoted " + c + " in " + key);
                        v.append(c);
                    }
                }
                if (out.put(key, v.toString()) != null) throw new IllegalArgumentException("duplicate key " + key);
                if (i < line.length()) {
                    if (line.charAt(i) != ' ') throw new IllegalArgumentException("no space after " + key);
                    i++;
                    if (i >= line.length() || line.charAt(i) == ' ') throw new IllegalArgumentException("stray space after " + key);
                }
            }
            return out;
        }
    }
}
