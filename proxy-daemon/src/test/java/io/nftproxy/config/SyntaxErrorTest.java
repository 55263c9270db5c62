package io.nftproxy.config;

import org.junit.jupiter.api.Test;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Parse failures in an operator's words: where (line, column of the problem itself) and why, no parser internals. */
class SyntaxErrorTest {
    private static final ObjectMapper YAML = YAMLMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
    private static final ObjectMapper JSON = JsonMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private static SyntaxError of(ObjectMapper m, String text, int firstLine) {
        JacksonException e = assertThrows(JacksonException.class, () -> m.readTree(text));
        return SyntaxError.of(e, text, firstLine);
    }

    @Test
    void aTabIsExplainedAtItsLineAndColumn() {
        SyntaxError e = of(YAML, "kind: KubeProxyConfiguration\nnftables:\n\tsyncPeriod: 1s\n", 1);
        assertEquals("a tab character at line 3, column 1: YAML indents with spaces", e.toString());
        assertFalse(e.toString().contains("scanning"), e.toString());
    }

    @Test
    void anUnclosedFlowSequenceNamesWhereItEndedAndWhereItOpened() {
        SyntaxError e = of(YAML, "a: 1\nnftables: [x\n", 1);
        assertEquals("at line 3, column 1: expected ',' or ']', but got the end of the document (the flow sequence that starts at line 2, column 11)",
                e.toString());
    }

    /** A document parsed alone, from line 10 of its file: the lines are the file's. */
    @Test
    void linesCountFromTheFirstLineOfThePartParsed() {
        assertEquals(12, of(YAML, "---\nkind: x\n  b: 2\n", 10).line());
    }

    @Test
    void aJsonErrorKeepsTheOffendingCharacterButNoParserInternals() {
        SyntaxError e = of(JSON, "{\"kind\": \"Service\", }", 1);
        assertEquals(1, e.line());
        assertEquals(21, e.column());
        assertTrue(e.reason().startsWith("Unexpected character ('}'): was expecting double-quote"), e.reason());
        for (String internal : new String[] {"[Source", "REDACTED", "byte offset", "(code ", "#UNKNOWN"}) {
            assertFalse(e.toString().contains(internal), e.toString());
        }
    }

    @Test
    void jacksonsFeatureAdviceAndCharacterCodesAreSaidInAnOperatorsWords() {
        assertEquals("at line 1, column 10: Non-standard token '…'", of(JSON, "{\"a\": NaN}", 1).toString());
        assertEquals("at line 1, column 8: Illegal unquoted character (the control character U+0001): has to be escaped using "
                + "backslash to be included in string value", of(JSON, "{\"a\": \"\u0001\"}", 1).toString());
    }

    @Test
    void aReadLimitIsStatedWithoutTheGetterThatHoldsIt() {
        SyntaxError e = of(JSON, "[".repeat(600) + "]".repeat(600), 1);
        assertEquals("Document nesting depth (501) exceeds the maximum allowed (500)", e.reason());
    }

    @Test
    void aControlCharacterIsNamedWithItsPosition() {
        SyntaxError e = of(YAML, "a: b\nkind: \"x\u0001\"\n", 1);
        assertEquals("at line 2, column 9: the control character U+0001, which YAML does not allow", e.toString());
    }

    /** Parsers echo the token they choked on; in a manifest directory that may be a Secret's value. */
    @Test
    void aQuotedTokenIsRedactedButASingleCharacterKept() {
        SyntaxError e = of(JSON, "{\"a\": s3cr3t-value}", 1);
        assertFalse(e.toString().contains("s3cr3t"), e.toString());
        assertTrue(e.toString().contains("'…'"), e.toString());
    }

    @Test
    void anUnreadableFileIsNamedByItsCause(@org.junit.jupiter.api.io.TempDir Path dir) {
        Path f = dir.resolve("config.yaml");
        assertEquals("permission denied", UnreadableFile.reason(f, new AccessDeniedException(f.toString())));
        IOException missing = assertThrows(IOException.class, () -> Files.readAllBytes(f));
        assertEquals("no such file", UnreadableFile.reason(f, missing));
        assertTrue(missing instanceof NoSuchFileException);
        IOException directory = assertThrows(IOException.class, () -> Files.readAllBytes(dir));
        assertEquals("is a directory", UnreadableFile.reason(dir, directory));
    }
}
