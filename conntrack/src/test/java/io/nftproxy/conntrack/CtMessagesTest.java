package io.nftproxy.conntrack;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;
import io.nftproxy.netlink.rt.NetlinkDump;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Byte layout checks that run without root; the kernel tests check the same messages against the real kernel. */
class CtMessagesTest {
    private static final FlowEntry V6 = new FlowEntry(IpFamily.IPV6, FlowEntry.UDP,
            IpAddress.parse("fd00:10::5"), IpAddress.parse("fd00:172:30::10"), 40000, 53,
            IpAddress.parse("fd00:10::99"), IpAddress.parse("fd00:10::5"), 5353, 40000, 5, 0xdeadbeefL,
            FlowEntry.NO_TCP_STATE, 0);

    @Test
    void deleteRequestHasTheOriginalTupleZoneAndIdBigEndian() {
        ByteBuffer b = ByteBuffer.allocate(CtMessages.MAX_DELETE_LEN).order(ByteOrder.nativeOrder());
        CtMessages.appendDelete(b, V6, 77);
        int len = b.position();
        assertEquals(len, b.getInt(0), "nlmsg_len");
        assertTrue(len <= CtMessages.MAX_DELETE_LEN, "fits the batch buffer: " + len);
        assertEquals(0, len % 4, "aligned");
        assertEquals((1 << 8) | 2, b.getShort(4) & 0xffff, "CTNETLINK << 8 | IPCTNL_MSG_CT_DELETE");
        assertEquals(NetlinkDump.NLM_F_REQUEST | CtMessages.NLM_F_ACK, b.getShort(6));
        assertEquals(77, b.getInt(8));
        assertEquals(CtMessages.AF_INET6, b.get(16));
        // CTA_TUPLE_ORIG, nested
        assertEquals(CtMessages.CTA_TUPLE_ORIG | CtMessages.NLA_F_NESTED, b.getShort(22) & 0xffff);
        byte[] tail = new byte[8];
        b.get(len - 8, tail);
        assertEquals(List.of(8, 0, 12, 0, 0xde, 0xad, 0xbe, 0xef), bytes(tail, b.order()), "CTA_ID last, big-endian");
    }

    @Test
    void parsesWhatTheDeleteEncodesAsADumpReply() throws Exception {
        // A dump reply carries the same attributes as a delete request, plus the reply tuple: build one from ours.
        ByteBuffer b = ByteBuffer.allocate(4096).order(ByteOrder.nativeOrder());
        CtMessages.appendDelete(b, V6, 9);
        int len = b.position();
        b.putShort(4, (short) CtMessages.type(CtMessages.IPCTNL_MSG_CT_NEW));
        FlowEntry replyAsOrig = new FlowEntry(IpFamily.IPV6, FlowEntry.UDP, V6.replySrc(), V6.replyDst(),
                V6.replySrcPort(), V6.replyDstPort(), V6.origSrc(), V6.origDst(), 0, 0, 0, 0, FlowEntry.NO_TCP_STATE, 0);
        ByteBuffer r = ByteBuffer.allocate(CtMessages.MAX_DELETE_LEN).order(ByteOrder.nativeOrder());
        CtMessages.appendDelete(r, replyAsOrig, 9);
        int tupleLen = r.getShort(20) & 0xffff;
        r.putShort(22, (short) (CtMessages.CTA_TUPLE_REPLY | CtMessages.NLA_F_NESTED));
        for (int i = 0; i < tupleLen; i++) b.put(r.get(20 + i));
        b.putInt(0, b.position());
        int done = b.position();
        b.putInt(16).putShort((short) NetlinkDump.NLMSG_DONE).putShort((short) 0).putInt(9).putInt(0);
        b.flip();

        List<FlowEntry> out = new ArrayList<>();
        assertTrue(CtMessages.parseDump(b, 9, IpFamily.IPV6, out));
        assertEquals(List.of(V6), out);
        assertTrue(done > len);

        List<FlowEntry> otherSeq = new ArrayList<>();
        assertFalse(CtMessages.parseDump(b.limit(done), 10, IpFamily.IPV6, otherSeq), "another sequence is skipped");
        assertTrue(otherSeq.isEmpty());
    }

    /** One ACK: an NLMSG_ERROR of {@code len} bytes answering {@code seq} with {@code -errno}. */
    private static void ack(ByteBuffer b, int len, int seq, int errno) {
        int start = b.position();
        b.putInt(len).putShort((short) NetlinkDump.NLMSG_ERROR).putShort((short) 0).putInt(seq).putInt(0);
        if (len >= 20) b.putInt(-errno);
        b.position(start + NetlinkDump.align(Math.max(len, 16)));
    }

    @Test
    void acksAreRecordedByTheirPlaceInTheBatchOnceEach() {
        ByteBuffer b = ByteBuffer.allocate(256).order(ByteOrder.nativeOrder());
        ack(b, 36, 101, 0);
        ack(b, 36, 103, 2);
        ack(b, 36, 101, 1); // a second answer to the same delete does not replace the first
        ack(b, 36, 99, 0);  // another batch's
        b.flip();
        int[] errnos = new int[3];
        java.util.Arrays.fill(errnos, CtMessages.NO_ACK);
        assertEquals(2, CtMessages.acks(b, 101, errnos), "the repeated answer is not counted again");
        assertEquals(List.of(0, CtMessages.NO_ACK, 2), java.util.Arrays.stream(errnos).boxed().toList());
    }

    /** A datagram cut short, or a length that runs past it, ends the walk: nothing past the datagram is read. */
    @Test
    void aMalformedAckEndsTheWalkWithoutReadingPastTheDatagram() {
        ByteBuffer b = ByteBuffer.allocate(512).order(ByteOrder.nativeOrder());
        ack(b, 36, 7, 0);
        ack(b, 16, 8, 0);   // an error message without its errno: skipped, not read past its end
        ack(b, 36, 9, 0);
        int cut = b.position();
        ack(b, 200, 10, 0); // claims more bytes than the datagram holds
        b.limit(cut + 20).position(0);
        int[] errnos = new int[4];
        java.util.Arrays.fill(errnos, CtMessages.NO_ACK);
        assertEquals(2, CtMessages.acks(b, 7, errnos));
        assertEquals(List.of(0, CtMessages.NO_ACK, 0, CtMessages.NO_ACK), java.util.Arrays.stream(errnos).boxed().toList());
    }

    @Test
    void anErrorReplyToTheDumpThrowsWithTheErrno() {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.nativeOrder());
        b.putInt(36).putShort((short) NetlinkDump.NLMSG_ERROR).putShort((short) 0).putInt(3).putInt(0).putInt(-1);
        b.put(new byte[16]).flip();
        var e = assertThrows(io.nftproxy.netlink.rt.NetlinkException.class,
                () -> CtMessages.parseDump(b, 3, IpFamily.IPV4, new ArrayList<>()));
        assertEquals(1, e.errno(), "EPERM");
    }

    private static List<Integer> bytes(byte[] b, ByteOrder order) {
        List<Integer> out = new ArrayList<>();
        // the attribute header is host order: normalise it to little-endian for the comparison
        boolean little = order == ByteOrder.LITTLE_ENDIAN;
        int[] hdr = little ? new int[]{b[0] & 0xff, b[1] & 0xff, b[2] & 0xff, b[3] & 0xff}
                : new int[]{b[1] & 0xff, b[0] & 0xff, b[3] & 0xff, b[2] & 0xff};
        for (int h : hdr) out.add(h);
        for (int i = 4; i < b.length; i++) out.add(b[i] & 0xff);
        return out;
    }
}
