package io.nftproxy.config;

import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.ReaderException;
import tools.jackson.core.JacksonException;
import tools.jackson.core.TokenStreamLocation;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a YAML or JSON file stopped parsing and why, in an operator's words: {@code at line 4, column 1: expected
 * ',' or ']', but got the end of the document (the flow sequence that starts at line 3, column 11)}, or {@code a tab
 * character at line 4, column 1: YAML indents with spaces}. Built from SnakeYAML's marks (where the problem is; Jackson's own location is
 * the last token it read) or, for JSON, Jackson's location; the parsers' own framing ({@code [Source: ...]}, the
 * quoted source line with a caret, Java class names, the read constraint's getter) never reaches the message.
 *
 * <p>Quoted tokens longer than one character are replaced by {@code '…'}: parsers echo what they choked on, and a
 * manifest directory may hold Secrets. A single character (the bracket or quote that was unexpected) is kept.
 *
 * @param line   1-based line in the file, or 0 when the parser did not say
 * @param column 1-based column, or 0
 * @param reason what is wrong, without the location
 */
public record SyntaxError(int line, int column, String reason) {
    /** A quoted single character (kept), else a longer quoted token (redacted); one scan, so {@code ',' or ']'} stays. */
    private static final Pattern QUOTED = Pattern.compile("'[^'\\n]'|\"[^\"\\n]\"|'[^'\\n]{2,}'|\"[^\"\\n]{2,}\"");
    /** SnakeYAML's names for what it found instead ({@code '<block end>'}): its own words, not the file's. */
    private static final Pattern TOKEN_KIND = Pattern.compile("'<[a-z ]+>'");
    private static final Pattern CONSTRAINT_GETTER = Pattern.compile(", from `[^`]*`");
    private static final Pattern CHAR_CODE = Pattern.compile(" \\(code \\d+\\)");
    private static final Pattern CTRL_CHAR = Pattern.compile("\\(\\(CTRL-CHAR, code (\\d+)\\)\\)");
    /** Jackson's advice to turn on one of its features: not the operator's to act on. */
    private static final Pattern FEATURE_ADVICE = Pattern.compile(": enable `[^`]*` to allow$");
    /** The location Jackson appends to some messages, with its source (REDACTED) and byte offset: said our way instead. */
    private static final Pattern SOURCE_LOCATION = Pattern.compile("\\s*(?:at )?\\[Source: .*$");
    private static final Pattern CLASS_PREFIX = Pattern.compile("^(?:[a-z]+\\.)+[A-Z]\\w*(?:Exception|Error): ");

    /** The failure of a parse that started at {@code firstLine} of the file (1 unless the text is a later part of it). */
    public static SyntaxError of(JacksonException e, String text, int firstLine) {
        int offset = firstLine - 1;
        Throwable cause = e.getCause();
        if (cause instanceof MarkedYamlEngineException m) return yaml(m, offset);
        if (cause instanceof ReaderException r) return unreadableCharacter(r, text, offset);
        String reason = e.getOriginalMessage();
        if (reason == null) reason = e.getClass().getSimpleName();
        reason = reason.lines().findFirst().orElse("").strip();
        reason = CLASS_PREFIX.matcher(reason).replaceFirst("");
        reason = CONSTRAINT_GETTER.matcher(reason).replaceAll("");
        reason = SOURCE_LOCATION.matcher(reason).replaceFirst("");
        reason = FEATURE_ADVICE.matcher(reason).replaceFirst("");
        reason = CTRL_CHAR.matcher(reason).replaceAll(m -> String.format("(the control character U+%04X)", Integer.parseInt(m.group(1))));
        reason = CHAR_CODE.matcher(reason).replaceAll("");
        TokenStreamLocation loc = e.getLocation();
        boolean known = loc != null && loc.getLineNr() > 0;
        return new SyntaxError(known ? loc.getLineNr() + offset : 0, known ? loc.getColumnNr() : 0, redact(reason));
    }

    private static SyntaxError yaml(MarkedYamlEngineException m, int offset) {
        String problem = m.getProblem() == null ? "" : m.getProblem();
        Optional<Mark> at = m.getProblemMark().or(m::getContextMark);
        int line = at.map(x -> x.getLine() + 1 + offset).orElse(0);
        int column = at.map(x -> x.getColumn() + 1).orElse(0);
        if (problem.contains("\\t(TAB)") || problem.contains("'\t'")) {
            return new SyntaxError(line, column, "a tab character: YAML indents with spaces");
        }
        String reason = problem.replace("'<stream end>'", "the end of the document").replace("<stream end>", "the end of the document");
        String context = m.getContext();
        Optional<Mark> contextMark = m.getContextMark();
        if (context != null && contextMark.isPresent() && m.getProblemMark().isPresent()) {
            Mark c = contextMark.get();
            reason += " (" + context.replaceFirst("^while (parsing|scanning) (an? )?", "the ") + " that starts at line "
                    + (c.getLine() + 1 + offset) + ", column " + (c.getColumn() + 1) + ")";
        }
        return new SyntaxError(line, column, redact(reason));
    }

    /** SnakeYAML's reader counts code points, not lines: the position is mapped back onto {@code text}. */
    private static SyntaxError unreadableCharacter(ReaderException r, String text, int offset) {
        int line = 1;
        int column = 1;
        int i = 0;
        for (int cp = 0; text != null && i < text.length() && cp < r.getPosition(); cp++) {
            int c = text.codePointAt(i);
            i += Character.charCount(c);
            if (c == '\n') {
                line++;
                column = 1;
            } else {
                column++;
            }
        }
        return new SyntaxError(text == null ? 0 : line + offset, text == null ? 0 : column,
                String.format("the control character U+%04X, which YAML does not allow", r.getCodePoint()));
    }

    private static String redact(String reason) {
        String r = QUOTED.matcher(reason).replaceAll(m -> m.group().length() == 3 || TOKEN_KIND.matcher(m.group()).matches()
                ? Matcher.quoteReplacement(m.group()) : "'…'");
        return r.length() > 200 ? r.substring(0, 200) + "…" : r;
    }

    /** {@code at line L, column C: reason}; a tab as {@code a tab character at line L, column C: ...}. */
    @Override public String toString() {
        String where = line <= 0 ? "" : "at line " + line + (column > 0 ? ", column " + column : "");
        String tab = "a tab character: ";
        if (reason.startsWith(tab) && !where.isEmpty()) return "a tab character " + where + ": " + reason.substring(tab.length());
        return where.isEmpty() ? reason : where + ": " + reason;
    }
}
