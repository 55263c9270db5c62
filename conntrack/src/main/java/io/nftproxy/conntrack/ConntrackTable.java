package io.nftproxy.conntrack;

import io.nftproxy.netlink.LibC;
import io.nftproxy.netlink.rt.NetlinkException;
import io.nftproxy.netlink.rt.NetlinkSocket;
import io.nftproxy.net.IpFamily;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The conntrack table of the calling thread's network namespace, over a ctnetlink socket: dump a family, delete
 * entries. Needs CAP_NET_ADMIN. Not thread-safe; open one per task (opening costs one socket and bind).
 */
public final class ConntrackTable implements AutoCloseable {
    /**
     * Deletes per {@code send()}. Pipelining saves a round trip per entry (1,000 deletes: 304 ms one by one, 35 ms
     * in batches of 128, reference/dependencies.md 3); above about 200 the ACKs overflowed the default receive buffer
     * (ENOBUFS) before we could read them.
     */
    public static final int DELETE_BATCH = 128;
    private static final int RECV_BUFFER = 256 * 1024;
    private static final int SOCKET_RCVBUF = 1 << 20;
    private static final int MAX_DATAGRAMS = 10_000_000;
    private static final int ENOENT = 2;
    private static final AtomicInteger SEQ = new AtomicInteger((int) (System.nanoTime() & 0x3fff_0000));

    private final NetlinkSocket socket;
    private final ByteBuffer recv = ByteBuffer.allocateDirect(RECV_BUFFER).order(ByteOrder.nativeOrder());
    private final ByteBuffer send = ByteBuffer.allocateDirect(DELETE_BATCH * CtMessages.MAX_DELETE_LEN)
            .order(ByteOrder.nativeOrder());

    private ConntrackTable(NetlinkSocket socket) { this.socket = socket; }

    /** Opens a ctnetlink socket in the calling thread's network namespace. */
    public static ConntrackTable open() throws IOException {
        // Room for a whole batch of ACKs, and for dump datagrams arriving while we parse.
        return new ConntrackTable(NetlinkSocket.open(LibC.NETLINK_NETFILTER, s -> s.setReceiveBuffer(SOCKET_RCVBUF)));
    }

    /** What a batch of deletes came to. {@code gone}: already deleted (ENOENT, or re-created with another id). */
    public record DeleteOutcome(int deleted, int gone, int errors, List<String> errorSamples) {
        public DeleteOutcome {
            errorSamples = List.copyOf(errorSamples);
        }
    }

    /** Every entry of {@code family}, all protocols, in the kernel's order; fails at {@code deadlineNanos}. */
    public List<FlowEntry> dump(IpFamily family, long deadlineNanos) throws IOException {
        int seq = SEQ.incrementAndGet();
        socket.send(CtMessages.dumpRequest(family, seq));
        List<FlowEntry> out = new ArrayList<>();
        for (int i = 0; i < MAX_DATAGRAMS; i++) {
            socket.receive(recv, deadlineNanos);
            if (CtMessages.parseDump(recv, seq, family, out)) return out;
        }
        throw new IOException("ctnetlink dump did not end after " + MAX_DATAGRAMS + " datagrams");
    }

    /**
     * Deletes {@code flows} in pipelined batches of {@link #DELETE_BATCH}, reading every ACK. Stops sending at
     * {@code deadlineNanos}; flows not attempted by then count as errors.
     */
    public DeleteOutcome delete(List<FlowEntry> flows, long deadlineNanos) throws IOException {
        int deleted = 0, gone = 0, errors = 0;
        List<String> samples = new ArrayList<>();
        for (int from = 0; from < flows.size(); from += DELETE_BATCH) {
            if (System.nanoTime() - deadlineNanos > 0) {
                int left = flows.size() - from;
                errors += left;
                sample(samples, left + " deletes not attempted: deadline passed");
                break;
            }
            List<FlowEntry> batch = flows.subList(from, Math.min(flows.size(), from + DELETE_BATCH));
            int firstSeq = SEQ.getAndAdd(batch.size()) + 1;
            send.clear();
            for (int i = 0; i < batch.size(); i++) CtMessages.appendDelete(send, batch.get(i), firstSeq + i);
            socket.send(send.flip());
            int[] errnos = new int[batch.size()];
            Arrays.fill(errnos, CtMessages.NO_ACK);
            int waiting = batch.size();
            String unanswered = null;
            while (waiting > 0) {
                try {
                    socket.receive(recv, deadlineNanos);
                } catch (NetlinkException e) {
                    if (!e.isOverrun()) throw e;
                    // ACKs were dropped: their entries' fate is unknown until the next dump, so count them as errors.
                    unanswered = " ACKs lost to a receive-buffer overrun";
                    drain();
                    break;
                } catch (IOException e) {
                    unanswered = " deletes unanswered: " + e.getMessage();
                    break;
                }
                waiting -= CtMessages.acks(recv, firstSeq, errnos);
            }
            for (int i = 0; i < errnos.length; i++) {
                if (errnos[i] == CtMessages.NO_ACK) continue;
                if (errnos[i] == 0) deleted++;
                else if (errnos[i] == ENOENT) gone++;
                else {
                    errors++;
                    sample(samples, batch.get(i) + ": " + new NetlinkException("ctnetlink delete", errnos[i]).getMessage());
                }
            }
            if (unanswered != null) {
                errors += waiting;
                sample(samples, waiting + unanswered);
            }
        }
        return new DeleteOutcome(deleted, gone, errors, samples);
    }

    /** After an overrun: read what is left so the next batch's ACKs are not mixed with these. */
    private void drain() {
        long until = System.nanoTime() + 2_000_000;
        try {
            while (true) socket.receive(recv, until);
        } catch (IOException e) {
            // nothing more queued
        }
    }

    private static void sample(List<String> samples, String s) {
        if (samples.size() < 5) samples.add(s);
    }

    @Override public void close() { socket.close(); }
}
