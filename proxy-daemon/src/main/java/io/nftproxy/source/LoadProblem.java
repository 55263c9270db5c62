package io.nftproxy.source;

import io.nftproxy.net.InvalidInputException;

import java.nio.file.Path;

/**
 * Something in the manifest directory that was not loaded, and why. The rest of the directory loads regardless.
 *
 * @param file          the file, as reached from the directory given to the loader
 * @param documentIndex the 0-based YAML document (or JSON value) within the file; -1 for the file as a whole
 * @param kind          the object's kind, or null when the document could not be read far enough to know it
 * @param object        {@code namespace/name} (or {@code name}, or {@code items[i]} inside a List), or null
 * @param field         the offending field path, e.g. {@code spec.ports[0].port}, or null
 * @param message       what was wrong; never echoes field values, which may come from a Secret in the same file
 */
public record LoadProblem(Path file, int documentIndex, String kind, String object, String field, String message) {

    public static LoadProblem ofFile(Path file, int documentIndex, String message) {
        return new LoadProblem(file, documentIndex, null, null, null, message);
    }

    /** A later copy of an object that {@code first} already held: the API server holds one object per name. */
    public static LoadProblem duplicate(Path file, String kind, String key, Path first) {
        return new LoadProblem(file, -1, kind, key, "metadata.name",
                "duplicate " + kind + " object; the first one, in " + first + ", is kept");
    }

    /**
     * One line in the same key=value shape as {@link io.nftproxy.service.Diagnostic}, for operators to grep; the
     * document counted from 1, as an operator counts the {@code ---} sections of a file ("-": the whole file).
     */
    public String describe(String verb) {
        return verb + " kind=" + orDash(kind) + " object=" + (object == null ? "-" : InvalidInputException.printable(object))
                + " field=" + orDash(field) + " reason=" + InvalidInputException.quoted(message)
                + " file=" + InvalidInputException.quoted(String.valueOf(file))
                + " document=" + (documentIndex < 0 ? "-" : String.valueOf(documentIndex + 1));
    }

    @Override public String toString() { return describe("skipped"); }

    private static String orDash(String s) { return s == null || s.isEmpty() ? "-" : s; }
}
