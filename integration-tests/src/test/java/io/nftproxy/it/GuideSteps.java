package io.nftproxy.it;

import java.util.ArrayList;
import java.util.List;

/**
 * The commands of a document's fenced {@code sh} blocks marked for a test by a line {@code <!-- migration-test: TAG -->}
 * right before the fence: one entry per command, continuation lines joined, in document order. So a test runs the
 * steps as the reader sees them, and a changed step changes what the test runs.
 */
final class GuideSteps {
    private GuideSteps() {}

    static List<String> marked(String markdown, String tag) {
        List<String> lines = markdown.lines().toList();
        List<String> out = new ArrayList<>();
        String marker = "<!-- migration-test: " + tag + " -->";
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).strip().equals(marker)) continue;
            if (i + 1 >= lines.size() || !lines.get(i + 1).strip().equals("```sh")) {
                throw new AssertionError("line " + (i + 1) + ": " + marker + " must stand right before a ```sh fence");
            }
            StringBuilder command = new StringBuilder();
            int j = i + 2;
            for (; j < lines.size() && !lines.get(j).strip().equals("```"); j++) {
                String l = lines.get(j).strip();
                if (l.endsWith("\\")) {
                    command.append(l, 0, l.length() - 1).append(' ');
                    continue;
                }
                command.append(l);
                if (!command.toString().isBlank()) out.add(command.toString().strip());
                command.setLength(0);
            }
            if (j == lines.size()) throw new AssertionError("line " + (i + 2) + ": the ```sh fence after " + marker + " is not closed");
            i = j;
        }
        return out;
    }

    /** The command without a trailing {@code # comment} (one after whitespace, outside quotes). */
    static String withoutComment(String command) {
        boolean single = false, dbl = false;
        for (int i = 0; i < command.length(); i++) {
            char c = command.charAt(i);
            if (c == '\'' && !dbl) single = !single;
            else if (c == '"' && !single) dbl = !dbl;
            else if (c == '#' && !single && !dbl && i > 0 && Character.isWhitespace(command.charAt(i - 1))) {
                return command.substring(0, i).strip();
            }
        }
        return command.strip();
    }

    /** The command's words as sh would split them (quotes removed; no expansion), its comment left out. */
    static List<String> words(String command) {
        String c = withoutComment(command);
        List<String> out = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        boolean single = false, dbl = false, any = false;
        for (char ch : c.toCharArray()) {
            if (ch == '\'' && !dbl) { single = !single; any = true; }
            else if (ch == '"' && !single) { dbl = !dbl; any = true; }
            else if (Character.isWhitespace(ch) && !single && !dbl) {
                if (any) out.add(w.toString());
                w.setLength(0);
                any = false;
            } else {
                w.append(ch);
                any = true;
            }
        }
        if (any) out.add(w.toString());
        return out;
    }
}
