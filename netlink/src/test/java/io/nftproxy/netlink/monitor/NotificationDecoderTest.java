package io.nftproxy.netlink.monitor;

import io.nftproxy.net.IpFamily;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Decoding and judging synthetic datagrams laid out as the kernel sends them; the kernel test checks the real ones. */
class NotificationDecoderTest {
    private static final int NFPROTO_IPV4 = 2;
    private static final int NFPROTO_IPV6 = 10;
    private static final int NFPROTO_INET = 1;

    @Test
    void decodesObjectMessagesAndTheGenerationInOneDatagram() {
        ByteBuffer b = datagram(
                object(NftMessage.DELRULE, NFPROTO_IPV4, "kube-proxy"),
                message(0x0102, 0, new byte[0]), // another nfnetlink subsystem: skipped
                object(NftMessage.DELSETELEM, NFPROTO_IPV6, "kube-proxy"),
                newgen(41, 4242, "nft"));
        List<Notification> out = new ArrayList<>();
        NotificationDecoder.decode(b, out);
        assertEquals(List.of(
                Notification.object(NftMessage.DELRULE, NFPROTO_IPV4, "kube-proxy"),
                Notification.object(NftMessage.DELSETELEM, NFPROTO_IPV6, "kube-proxy"),
                Notification.generation(41, 4242, "nft")), out);
    }

    @Test
    void aLengthPointingOutsideTheDatagramIsRejected() {
        ByteBuffer b = datagram(object(NftMessage.DELTABLE, NFPROTO_IPV4, "kube-proxy"));
        b.putInt(0, b.limit() + 4);
        assertThrows(IllegalArgumentException.class, () -> NotificationDecoder.decode(b, new ArrayList<>()));
    }

    @Test
    void aTransactionIsJudgedByTheNewgenThatClosesIt() {
        TransactionAssembler a = new TransactionAssembler("kube-proxy", pid -> pid == 100, false, new CommitLedger());
        assertNull(a.accept(Notification.object(NftMessage.DELTABLE, NFPROTO_IPV4, "kube-proxy"), 1));
        assertNull(a.accept(Notification.object(NftMessage.DELTABLE, NFPROTO_IPV6, "kube-proxy"), 1));
        assertNull(a.accept(Notification.object(NftMessage.DELTABLE, NFPROTO_IPV4, "other"), 1));
        TableChange c = a.accept(Notification.generation(7, 555, "nft"), 2);
        assertEquals(new TableChange(TableChange.Origin.FOREIGN, Set.of(IpFamily.IPV4, IpFamily.IPV6),
                Set.of(NftMessage.DELTABLE), 2, 7, 555, "nft", "", 2), c);

        // The next transaction starts empty: only an unrelated table, so nothing to report.
        assertNull(a.accept(Notification.object(NftMessage.NEWTABLE, NFPROTO_IPV4, "other"), 3));
        assertNull(a.accept(Notification.generation(8, 555, "nft"), 3));
    }

    @Test
    void ownAndInetAndUnrelatedTransactionsAreNotReported() {
        TransactionAssembler a = new TransactionAssembler("kube-proxy", pid -> pid == 100, false, new CommitLedger());
        a.accept(Notification.object(NftMessage.NEWRULE, NFPROTO_IPV4, "kube-proxy"), 1);
        assertNull(a.accept(Notification.generation(1, 100, "java"), 1), "own");
        a.accept(Notification.object(NftMessage.DELTABLE, NFPROTO_INET, "kube-proxy"), 1);
        assertNull(a.accept(Notification.generation(2, 200, "nft"), 1), "inet kube-proxy is not ours");
        a.accept(Notification.object(NftMessage.DELRULE, NFPROTO_IPV4, "kube-proxy"), 1);
        assertEquals(TableChange.Origin.FOREIGN, a.accept(Notification.generation(3, 0, ""), 1).origin(),
                "a missing PID is never taken for ours");
    }

    @Test
    void ownTransactionsAreReportedAsOwnWhenAskedFor() {
        TransactionAssembler a = new TransactionAssembler("kube-proxy", pid -> pid == 100, true, new CommitLedger());
        a.accept(Notification.object(NftMessage.NEWSETELEM, NFPROTO_IPV6, "kube-proxy"), 1);
        TableChange c = a.accept(Notification.generation(9, 100, "nft-ctx"), 1);
        assertEquals(TableChange.Origin.OWN, c.origin());
        assertEquals(false, c.requiresResync());
    }

    @Test
    void lostForgetsAHalfSeenTransactionAndTheLedgersRun() {
        CommitLedger ledger = new CommitLedger();
        TransactionAssembler a = new TransactionAssembler("kube-proxy", pid -> false, false, ledger);
        a.accept(Notification.generation(1, 300, "nft"), 1);
        a.accept(Notification.generation(2, 300, "nft"), 1);
        assertEquals(true, ledger.untouchedBetween(IpFamily.IPV4, 1, 2));
        a.accept(Notification.object(NftMessage.DELRULE, NFPROTO_IPV4, "kube-proxy"), 1);
        a.lost();
        assertNull(a.accept(Notification.generation(3, 300, "nft"), 1));
        assertEquals(false, ledger.untouchedBetween(IpFamily.IPV4, 2, 3), "commit 3 may have been seen in part");
    }

    @Test
    void theLedgerHearsOfEveryCommitAndWhichOfOurFamiliesItTouched() {
        CommitLedger ledger = new CommitLedger();
        TransactionAssembler a = new TransactionAssembler("kube-proxy", pid -> pid == 100, false, ledger);
        a.accept(Notification.generation(10, 100, "java"), 1);                       // the run starts here
        a.accept(Notification.object(NftMessage.NEWRULE, NFPROTO_IPV4, "kube-proxy"), 1);
        assertNull(a.accept(Notification.generation(11, 100, "java"), 1));            // ours, not reported
        a.accept(Notification.object(NftMessage.NEWTABLE, NFPROTO_IPV4, "cni"), 1);
        assertNull(a.accept(Notification.generation(12, 200, "nft"), 1));             // someone else's own table
        assertEquals(true, ledger.untouchedBetween(IpFamily.IPV4, 11, 12));
        assertEquals(false, ledger.untouchedBetween(IpFamily.IPV4, 10, 12), "commit 11 touched ip kube-proxy");
        assertEquals(true, ledger.untouchedBetween(IpFamily.IPV6, 10, 12));
    }

    @Test
    void ownProcessesKnowsThisJvmsThreadsAndRegisteredChildren() {
        OwnProcesses own = OwnProcesses.thisProcess();
        assertEquals(java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/self/task")),
                own.test((int) ProcessHandle.current().pid()));
        assertEquals(false, own.test(0));
        own.registerChild(Integer.MAX_VALUE - 1);
        assertEquals(true, own.test(Integer.MAX_VALUE - 1));
        for (int i = 0; i < OwnProcesses.RECENT_CHILDREN; i++) own.registerChild(1_000_000_000 + i);
        assertEquals(false, own.test(Integer.MAX_VALUE - 1), "only the most recent children are remembered");
    }

    private static ByteBuffer datagram(byte[]... messages) {
        ByteBuffer b = ByteBuffer.allocate(4096).order(ByteOrder.nativeOrder());
        for (byte[] m : messages) {
            b.put(m);
            while (b.position() % 4 != 0) b.put((byte) 0);
        }
        return b.flip();
    }

    private static byte[] object(NftMessage m, int family, String table) {
        return message(m.wireType(), family, attr(1, cstring(table)));
    }

    private static byte[] newgen(int generation, int pid, String name) {
        ByteBuffer be = ByteBuffer.allocate(8).order(ByteOrder.BIG_ENDIAN).putInt(generation).putInt(pid);
        byte[] id = new byte[4];
        byte[] p = new byte[4];
        be.get(0, id).get(4, p);
        return message(NftMessage.NEWGEN.wireType(), 0, concat(attr(1, id), attr(2, p), attr(3, cstring(name))));
    }

    /** {@code nlmsghdr} + {@code nfgenmsg} + attributes. */
    private static byte[] message(int type, int family, byte[] attrs) {
        ByteBuffer b = ByteBuffer.allocate(16 + 4 + attrs.length).order(ByteOrder.nativeOrder());
        b.putInt(b.capacity()).putShort((short) type).putShort((short) 0).putInt(0).putInt(0);
        b.put((byte) family).put((byte) 0).putShort((short) 0).put(attrs);
        return b.array();
    }

    private static byte[] attr(int type, byte[] payload) {
        int len = 4 + payload.length;
        ByteBuffer b = ByteBuffer.allocate((len + 3) & ~3).order(ByteOrder.nativeOrder());
        b.putShort((short) len).putShort((short) type).put(payload);
        return b.array();
    }

    private static byte[] cstring(String s) {
        byte[] v = s.getBytes(StandardCharsets.UTF_8);
        return java.util.Arrays.copyOf(v, v.length + 1);
    }

    private static byte[] concat(byte[]... parts) {
        ByteBuffer b = ByteBuffer.allocate(java.util.Arrays.stream(parts).mapToInt(x -> x.length).sum());
        for (byte[] p : parts) b.put(p);
        return b.array();
    }
}
