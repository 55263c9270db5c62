package io.nftproxy.netlink.nft;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one error nft calls raise, whichever client made them. Its {@link Kind} is read from nft's error text, which
 * nft never localises, so matching on it is safe (knftables does the same). The full text is kept for logs; the
 * first failing line of the script, when nft names one, is kept for the operator.
 *
 * <p>Unchecked: every {@link NftClient} call can fail, and callers test the kind with the predicates rather than
 * catching subtypes.
 */
public final class NftException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public enum Kind {
        /** A table, chain, set, map, element or rule the command names does not exist (ENOENT). */
        NOT_FOUND,
        /** {@code create} of something that already exists (EEXIST). */
        EXISTS,
        /** The caller lacks CAP_NET_ADMIN in the target namespace (EPERM, EACCES). */
        PERMISSION,
        /** This nft or kernel does not support what was asked (EOPNOTSUPP), or libnftables is not loadable. */
        UNSUPPORTED,
        /** nft refused the script before the kernel saw it: syntax or evaluation errors. */
        INVALID,
        /** Anything else: another errno from the kernel, a timeout, a process that could not start. */
        FAILED
    }

    /** {@code /dev/stdin:3:22-28: Error: ...}: nft's location prefix when it reads a file. */
    private static final Pattern LOCATED = Pattern.compile("^(?:[^:\\n]*):(\\d+):[\\d-]+: Error: (.*)$", Pattern.MULTILINE);
    private static final Pattern PLAIN = Pattern.compile("^Error: (.*)$", Pattern.MULTILINE);

    private final Kind kind;
    private final String errorText;
    private final String failingLine;
    private final int lineNumber;

    /** A failure that is not nft's parser or the kernel answering: no error text, no failing line. */
    public static NftException of(Kind kind, String message, Throwable cause) {
        NftException e = new NftException(kind, message, null, null, 0);
        if (cause != null) e.initCause(cause);
        return e;
    }

    /** {@link #of} with {@link Kind#FAILED}. */
    public static NftException failed(String message, Throwable cause) { return of(Kind.FAILED, message, cause); }

    /** {@link #failed(String, Throwable)} without a cause. */
    public static NftException failed(String message) { return of(Kind.FAILED, message, null); }

    public NftException(Kind kind, String message, String errorText, String failingLine, int lineNumber) {
        super(message);
        this.kind = kind;
        this.errorText = errorText;
        this.failingLine = failingLine;
        this.lineNumber = lineNumber;
    }

    /**
     * Classifies nft's error output. {@code context} says what was being done ("apply 12 commands to ip kube-proxy");
     * the message is the context, the first error and the line that caused it.
     */
    public static NftException fromErrorText(String context, String errorText) {
        String text = errorText == null ? "" : errorText.strip();
        String first = null;
        int lineNo = 0;
        int end = -1;
        Matcher m = LOCATED.matcher(text);
        if (m.find()) {
            lineNo = Integer.parseInt(m.group(1));
            first = m.group(2);
            end = m.end();
        } else {
            m = PLAIN.matcher(text);
            if (m.find()) {
                first = m.group(1);
                end = m.end();
            }
        }
        String failing = null;
        if (end >= 0 && end < text.length()) {
            failing = firstLine(text.substring(end).stripLeading()).strip();
            if (failing.isEmpty() || failing.chars().allMatch(c -> c == '^' || c == '~' || c == ' ')) failing = null;
        }
        boolean fromParser = first != null;
        if (!fromParser) first = text.isEmpty() ? "nft failed without an error message" : firstLine(text);
        Kind kind = classify(first);
        // No "Error:" line: not something nft's parser said, so not INVALID.
        if (!fromParser && kind == Kind.INVALID) kind = Kind.FAILED;
        StringBuilder msg = new StringBuilder(context).append(": ").append(first);
        if (failing != null) {
            msg.append(" (");
            if (lineNo > 0) msg.append("line ").append(lineNo).append(": ");
            msg.append(failing).append(')');
        }
        return new NftException(kind, msg.toString(), text, failing, lineNo);
    }

    /** The kind of one nft error line, without its {@code Error:} prefix. */
    static Kind classify(String error) {
        if (error.contains("Operation not permitted") || error.contains("Permission denied")) return Kind.PERMISSION;
        if (error.contains("No such file or directory")) return Kind.NOT_FOUND;
        if (error.contains("File exists")) return Kind.EXISTS;
        if (error.contains("not supported")) return Kind.UNSUPPORTED;
        // "Could not process rule: <strerror>" is the kernel refusing the batch; the errnos above are the ones we name.
        if (error.startsWith("Could not process rule")) return Kind.FAILED;
        // Everything else nft says before it talks to the kernel: syntax errors, evaluation errors
        // ("invalid priority expression value in this context"), unknown identifiers.
        return Kind.INVALID;
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    public Kind kind() { return kind; }

    /** nft's complete error output, possibly empty; never null. */
    public String errorText() { return errorText == null ? "" : errorText; }

    /** The script line nft pointed at, or null. */
    public String failingLine() { return failingLine; }

    /** The 1-based script line number when nft reported one ({@code nft -f}), else 0. */
    int lineNumber() { return lineNumber; }

    public boolean isNotFound() { return kind == Kind.NOT_FOUND; }

    public boolean isPermission() { return kind == Kind.PERMISSION; }

    /** The call's result, or null when nft says the object does not exist ("No such file or directory"). */
    public static <T> T nullIfNotFound(java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (NftException e) {
            if (e.isNotFound()) return null;
            throw e;
        }
    }
}
