package io.nftproxy.netlink.monitor;

import io.nftproxy.netlink.LibC;
import io.nftproxy.netlink.NetworkNamespace;
import io.nftproxy.netlink.rt.NetlinkException;
import io.nftproxy.netlink.rt.NetlinkSocket;
import io.nftproxy.nft.TableContent;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntPredicate;

/**
 * Watches the kernel's nf_tables change notifications ({@code NFNLGRP_NFTABLES}, what {@code nft monitor}
 * shows) and tells a {@link TableChangeListener} when a transaction touched {@code table ip kube-proxy} or
 * {@code table ip6 kube-proxy} and was not ours, so the table can be repaired at once rather than at the next
 * periodic sync.
 *
 * <p>Two daemon threads: a reader that only reads and decodes (it never waits for the listener), and a listener
 * thread that delivers. When the kernel drops notifications because the socket's queue overflowed
 * ({@code ENOBUFS}), an {@link TableChange.Origin#OVERFLOW} change is delivered; when the listener falls behind or
 * a datagram cannot be read, an {@link TableChange.Origin#UNKNOWN} one: whatever happened in the gap, a full
 * resync covers it.
 *
 * <p>Every notification in the namespace passes through the reader, our own commits included, so a large own
 * commit (a cold start) can overrun the queue and cause one unnecessary resync; the 8 MiB receive buffer makes that
 * rare.
 *
 * <p>The subscription is active when {@link Builder#start} returns: any commit after that is seen.
 */
public final class NftablesMonitor implements AutoCloseable {
    /** {@code NFNLGRP_NFTABLES} in {@code linux/netfilter/nfnetlink.h}. */
    static final int NFNLGRP_NFTABLES = 7;
    static final int DEFAULT_RECEIVE_BUFFER = 8 << 20;
    static final int DATAGRAM_BUFFER = 256 << 10;
    static final int QUEUE_CAPACITY = 1024;
    /** How long the reader blocks per recv, and so how long {@link #close()} waits for it at most. */
    static final long POLL_MILLIS = 200;

    private final NetlinkSocket socket;
    private final TransactionAssembler assembler;
    private final TableChangeListener listener;
    private final BlockingQueue<TableChange> queue = new ArrayBlockingQueue<>(QUEUE_CAPACITY);
    private final AtomicBoolean backlogDropped = new AtomicBoolean();
    private final AtomicLong overruns = new AtomicLong();
    private final Thread reader;
    private final Thread dispatcher;
    private final CountDownLatch readerGate;
    private volatile boolean stopping;
    private volatile Exception failure;

    private NftablesMonitor(NetlinkSocket socket, Builder b, TableChangeListener listener) {
        this.socket = socket;
        this.assembler = new TransactionAssembler(b.table, b.ownPids, b.reportOwn, b.ledger);
        this.listener = listener;
        this.readerGate = b.readerGate;
        String suffix = b.netns.name().map(n -> "-" + n).orElse("");
        this.reader = new Thread(this::read, "nft-monitor" + suffix);
        this.dispatcher = new Thread(this::dispatch, "nft-monitor-listener" + suffix);
        reader.setDaemon(true);
        dispatcher.setDaemon(true);
    }

    public static Builder builder() { return new Builder(); }

    /** Options, then {@link #start}. */
    public static final class Builder {
        private NetworkNamespace netns = NetworkNamespace.host();
        private IntPredicate ownPids;
        private boolean reportOwn;
        private int receiveBuffer = DEFAULT_RECEIVE_BUFFER;
        private String table = TableContent.TABLE_NAME;
        private CountDownLatch readerGate;
        private CommitLedger ledger = new CommitLedger();

        private Builder() {}

        /** Where every commit the monitor sees is recorded; default a ledger of its own that nobody reads. */
        public Builder ledger(CommitLedger ledger) { this.ledger = java.util.Objects.requireNonNull(ledger); return this; }

        /** Watches {@code netns}; default the JVM's own. */
        public Builder netns(NetworkNamespace netns) { this.netns = java.util.Objects.requireNonNull(netns); return this; }

        /** Which committing PIDs are ours; default {@link OwnProcesses#thisProcess()}. */
        public Builder ownPids(IntPredicate own) { this.ownPids = own; return this; }

        /** Also deliver our own transactions, as {@link TableChange.Origin#OWN}; default false. */
        Builder reportOwnChanges(boolean report) { this.reportOwn = report; return this; }

        /** Any receive buffer, the kernel's minimum included: a test's way to overflow with a small commit. */
        Builder receiveBufferBytesForTest(int bytes) {
            this.receiveBuffer = bytes;
            return this;
        }

        /** The table name to watch in families ip and ip6; default {@code kube-proxy}. For tests. */
        Builder table(String name) { this.table = name; return this; }

        /**
         * Subscribes at start but reads nothing until {@code gate} opens: lets a test fill the socket's queue and
         * force an overrun, which a fast reader on an idle machine would otherwise avoid.
         */
        Builder holdReaderUntil(CountDownLatch gate) { this.readerGate = gate; return this; }

        /**
         * Opens the socket (in the chosen namespace), subscribes, and starts the threads.
         *
         * @throws NetlinkException with the errno if the socket cannot be opened or subscribed ({@code EPERM}
         *                          without CAP_NET_ADMIN)
         */
        public NftablesMonitor start(TableChangeListener listener) throws IOException {
            if (listener == null) throw new NullPointerException("listener");
            if (ownPids == null) ownPids = OwnProcesses.thisProcess();
            // A socket belongs to the namespace of the thread that created it, for life: create it there, read anywhere.
            NetlinkSocket s = netns.call(() -> open(receiveBuffer));
            NftablesMonitor m = new NftablesMonitor(s, this, listener);
            m.dispatcher.start();
            m.reader.start();
            return m;
        }
    }

    private static NetlinkSocket open(int receiveBuffer) throws IOException {
        return NetlinkSocket.open(LibC.NETLINK_NETFILTER, s -> {
            s.setReceiveBuffer(receiveBuffer);
            s.setReceiveTimeout(POLL_MILLIS);
            s.joinGroup(NFNLGRP_NFTABLES);
        });
    }

    private void read() {
        ByteBuffer buf = ByteBuffer.allocateDirect(DATAGRAM_BUFFER).order(ByteOrder.nativeOrder());
        List<Notification> decoded = new ArrayList<>();
        try {
            if (readerGate != null) readerGate.await();
            while (!stopping) {
                long n;
                try {
                    n = socket.receiveWaiting(buf);
                } catch (NetlinkException e) {
                    if (!e.isOverrun()) throw e;
                    overruns.incrementAndGet();
                    assembler.lost();
                    enqueue(TableChange.overflow("notifications dropped: netlink socket overrun (ENOBUFS)", System.nanoTime()));
                    continue;
                }
                if (n < 0) continue;
                if (n > buf.capacity()) {
                    lost("notification of " + n + " bytes truncated to " + buf.capacity());
                    continue;
                }
                long now = System.nanoTime();
                decoded.clear();
                try {
                    NotificationDecoder.decode(buf, decoded);
                } catch (IllegalArgumentException e) {
                    lost(e.getMessage());
                    continue;
                }
                for (Notification note : decoded) {
                    TableChange c = assembler.accept(note, now);
                    if (c != null) enqueue(c);
                }
            }
        } catch (IOException | RuntimeException e) {
            if (!stopping) failure = e;
        } catch (InterruptedException e) {
            // only while held by a test gate: end quietly
        } finally {
            // A monitor that stopped sees no more commits: its ledger must vouch for none.
            assembler.lost();
            socket.close();
        }
    }

    private void lost(String why) {
        assembler.lost();
        enqueue(TableChange.unknown(why, System.nanoTime()));
    }

    private void enqueue(TableChange c) {
        // Never block the reader: a full queue collapses into one UNKNOWN change, which implies a full resync anyway.
        if (!queue.offer(c)) backlogDropped.set(true);
    }

    private void dispatch() {
        while (true) {
            TableChange c;
            try {
                c = queue.poll(POLL_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (c != null) callListener(() -> listener.onTableChange(c));
            if (backlogDropped.getAndSet(false)) {
                TableChange behind = TableChange.unknown("listener fell behind; " + QUEUE_CAPACITY + " changes queued", System.nanoTime());
                callListener(() -> listener.onTableChange(behind));
            }
            if (c == null && !reader.isAlive() && queue.isEmpty()) {
                Exception f = failure;
                if (f != null && !stopping) callListener(() -> listener.onMonitorFailed(f));
                return;
            }
        }
    }

    private static void callListener(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            // The listener owns its error handling; one bad delivery must not stop the next.
        }
    }

    /** How many times the kernel reported dropped notifications. */
    long overruns() { return overruns.get(); }

    /**
     * Stops reading and delivering; returns within about {@value #POLL_MILLIS} ms plus the listener's current
     * call. Changes still queued are dropped. Idempotent.
     */
    @Override public void close() {
        stopping = true;
        try {
            reader.join(POLL_MILLIS * 5);
            dispatcher.interrupt();
            dispatcher.join(POLL_MILLIS * 5);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
