package io.nftproxy.conntrack;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;

import java.util.Objects;

/**
 * One conntrack entry as ctnetlink reports it: the original-direction tuple (what the client sent), the reply tuple
 * (what the kernel expects back, so after DNAT its source is the endpoint), the zone and the kernel's id.
 * {@code protocol} is the IP protocol number ({@link #UDP}, {@link #TCP}, {@link #SCTP}, ...). Ports are 0 for
 * protocols without ports. {@code id} is passed back on delete so that a flow re-created with the same tuple
 * between our dump and our delete is left alone. {@code tcpState} is the kernel's TCP tracking state
 * ({@link #NO_TCP_STATE} for other protocols), {@code status} the entry's {@code IPS_*} status bits; both are for
 * people reading the flow ({@link #state()}), nothing decides on them.
 */
public record FlowEntry(IpFamily family, int protocol,
                        IpAddress origSrc, IpAddress origDst, int origSrcPort, int origDstPort,
                        IpAddress replySrc, IpAddress replyDst, int replySrcPort, int replyDstPort,
                        int zone, long id, int tcpState, long status) {
    public static final int TCP = 6;
    public static final int UDP = 17;
    public static final int SCTP = 132;
    public static final int NO_TCP_STATE = -1;
    /** {@code IPS_SEEN_REPLY}: packets went both ways. */
    public static final long SEEN_REPLY = 1L << 1;
    /** {@code IPS_ASSURED}: the kernel will not drop the entry early when the table is full. */
    public static final long ASSURED = 1L << 2;
    /** enum tcp_conntrack (include/uapi/linux/netfilter/nf_conntrack_tcp.h), named as conntrack -L prints them. */
    private static final String[] TCP_STATES = {"NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT",
            "CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2"};

    public FlowEntry {
        Objects.requireNonNull(family, "family");
        Objects.requireNonNull(origSrc, "origSrc");
        Objects.requireNonNull(origDst, "origDst");
        Objects.requireNonNull(replySrc, "replySrc");
        Objects.requireNonNull(replyDst, "replyDst");
    }

    /**
     * As {@code conntrack -L} shows it: the TCP state if any, then {@code [UNREPLIED]} or {@code [ASSURED]};
     * e.g. {@code ESTABLISHED [ASSURED]}, {@code [UNREPLIED]}; {@code -} when there is nothing to say.
     */
    public String state() {
        StringBuilder sb = new StringBuilder();
        if (tcpState != NO_TCP_STATE) sb.append(tcpState < TCP_STATES.length ? TCP_STATES[tcpState] : "STATE_" + tcpState);
        String flag = (status & SEEN_REPLY) == 0 ? "[UNREPLIED]" : (status & ASSURED) != 0 ? "[ASSURED]" : null;
        if (flag != null) sb.append(sb.length() == 0 ? "" : " ").append(flag);
        return sb.length() == 0 ? "-" : sb.toString();
    }

    /** A flow with zone 0, no id, no TCP state and no status bits, the shape unit tests need. */
    public static FlowEntry of(int protocol, String origSrc, int sport, String origDst, int dport,
                               String replySrc, int replySport) {
        IpAddress s = IpAddress.parse(origSrc);
        return new FlowEntry(s.family(), protocol, s, IpAddress.parse(origDst), sport, dport,
                IpAddress.parse(replySrc), s, replySport, sport, 0, 0, NO_TCP_STATE, 0);
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
