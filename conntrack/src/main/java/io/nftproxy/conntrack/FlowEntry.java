package io.nftproxy.conntrack;

import io.nftproxy.proxy.IpAddress;
import io.nftproxy.proxy.IpFamily;

import java.util.Objects;

/**
 * One conntrack entry as ctnetlink reports it: the original-direction tuple (what the client sent), the reply tuple
 * (what the kernel expects back, so after DNAT its source is the endpoint), the zone and the kernel's id.
 * {@code protocol} is the IP protocol number ({@link #UDP}, {@link #TCP}, {@link #SCTP}, ...). Ports are 0 for
 * protocols without ports. {@code id} is passed back on delete so that a flow re-created with the same tuple
 * between our dump and our delete is left alone.
 */
public record FlowEntry(IpFamily family, int protocol,
                        IpAddress origSrc, IpAddress origDst, int origSrcPort, int origDstPort,
                        IpAddress replySrc, IpAddress replyDst, int replySrcPort, int replyDstPort,
                        int zone, long id) {
    public static final int TCP = 6;
    public static final int UDP = 17;
    public static final int SCTP = 132;

    public FlowEntry {
        Objects.requireNonNull(family, "family");
        Objects.requireNonNull(origSrc, "origSrc");
        Objects.requireNonNull(origDst, "origDst");
        Objects.requireNonNull(replySrc, "replySrc");
        Objects.requireNonNull(replyDst, "replyDst");
    }

    /** A flow with zone 0 and no id, the shape unit tests need. */
    public static FlowEntry of(int protocol, String origSrc, int sport, String origDst, int dport,
                               String replySrc, int replySport) {
        IpAddress s = IpAddress.parse(origSrc);
        return new FlowEntry(s.family(), protocol, s, IpAddress.parse(origDst), sport, dport,
                IpAddress.parse(replySrc), s, replySport, sport, 0, 0);
    }

    public boolean isUdp() { return protocol == UDP; }

    /** Whether the flow was destination-NATed: the reply comes from somewhere else than the client addressed. */
    public boolean isDnat() { return !replySrc.equals(origDst) || replySrcPort != origDstPort; }

    /** The protocol's name as {@code conntrack -L} prints it. */
    public String protocolName() {
        switch (protocol) {
            case TCP: return "tcp";
            case UDP: return "udp";
            case SCTP: return "sctp";
            case 1: return "icmp";
            case 58: return "icmpv6";
            default: return "proto-" + protocol;
        }
    }

    /** Close to {@code conntrack -L}: {@code udp src=A dst=B sport=P dport=Q src=C dst=D sport=R dport=S}. */
    @Override public String toString() {
        return protocolName() + " src=" + origSrc + " dst=" + origDst + " sport=" + origSrcPort + " dport=" + origDstPort
                + " src=" + replySrc + " dst=" + replyDst + " sport=" + replySrcPort + " dport=" + replyDstPort
                + (zone != 0 ? " zone=" + zone : "");
    }
}
