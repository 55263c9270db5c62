package io.nftproxy.trace;

/** The table cannot be traced to an end: a jump loop, too many steps, or too many possible paths. */
public final class TraceException extends IllegalStateException {
    public TraceException(String message) { super(message); }
}
