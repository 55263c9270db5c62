package io.nftproxy.source.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A response body read as a stream, with what the JDK's own {@code ofInputStream} lacks for a watch: a read that
 * waits longer than the idle limit fails (a half-open connection delivers nothing and never closes), and
 * {@link #close} from another thread wakes a blocked read. Demand is one buffer list at a time, so a slow reader
 * holds back the socket rather than filling the heap.
 */
final class StreamBody extends InputStream implements HttpResponse.BodySubscriber<InputStream> {
    private static final List<ByteBuffer> END = List.of();

    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private volatile long idleNanos;
    private volatile Flow.Subscription subscription;
    private volatile boolean closed;
    private List<ByteBuffer> current = List.of();
    private int index;
    private boolean ended;

    StreamBody(Duration idleLimit) { this.idleNanos = idleLimit.toNanos(); }

    /** A new idle limit for the reads that follow: a streamed list's, then its watch's. */
    void idleLimit(Duration idleLimit) { this.idleNanos = idleLimit.toNanos(); }

    /** The stream is the body at once: the caller reads while bytes still arrive. */
    @Override public java.util.concurrent.CompletionStage<InputStream> getBody() {
        return java.util.concurrent.CompletableFuture.completedFuture(this);
    }

    @Override public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        if (closed) s.cancel();
        else s.request(1);
    }

    @Override public void onNext(List<ByteBuffer> item) { queue.add(item); }

    @Override public void onError(Throwable t) { queue.add(t); }

    @Override public void onComplete() { queue.add(END); }

    @Override public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) return 0;
        ByteBuffer buf = buffer();
        if (buf == null) return -1;
        int n = Math.min(len, buf.remaining());
        buf.get(b, off, n);
        return n;
    }

    private ByteBuffer buffer() throws IOException {
        while (true) {
            if (closed) throw new IOException("stream closed");
            if (ended) return null;
            while (index < current.size()) {
                ByteBuffer b = current.get(index);
                if (b.hasRemaining()) return b;
                index++;
            }
            Object next;
            try {
                next = queue.poll(idleNanos, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while reading the API server's response");
            }
            if (closed) throw new IOException("stream closed");
            if (next == null) {
                throw new IdleTimeoutException("the API server sent nothing for " + Duration.ofNanos(idleNanos).toSeconds()
                        + " s on an open response (a dead connection)");
            }
            if (next instanceof Throwable t) throw t instanceof IOException io ? io : new IOException(t);
            @SuppressWarnings("unchecked") List<ByteBuffer> list = (List<ByteBuffer>) next;
            if (list == END) {
                ended = true;
                return null;
            }
            current = list;
            index = 0;
            Flow.Subscription s = subscription;
            if (s != null) s.request(1);
        }
    }

    /** Cancels the response and wakes a blocked reader; safe from any thread, any number of times. */
    @Override public void close() {
        closed = true;
        Flow.Subscription s = subscription;
        if (s != null) s.cancel();
        queue.add(END);
    }

    /** Nothing arrived within the idle limit. */
    static final class IdleTimeoutException extends IOException {
        IdleTimeoutException(String message) { super(message); }
    }
}
