package io.nftproxy.netlink.monitor;

/**
 * The nf_tables netlink message types a change notification can carry ({@code enum nf_tables_msg_types} in
 * {@code linux/netfilter/nf_tables.h}), named as the kernel names them without the {@code NFT_MSG_} prefix.
 * The wire type is {@code NFNL_SUBSYS_NFTABLES << 8 | code}.
 */
public enum NftMessage {
    NEWTABLE(0), DELTABLE(2),
    NEWCHAIN(3), DELCHAIN(5),
    NEWRULE(6), DELRULE(8),
    NEWSET(9), DELSET(11),
    NEWSETELEM(12), DELSETELEM(14),
    NEWGEN(15),
    NEWOBJ(18), DELOBJ(20),
    NEWFLOWTABLE(22), DELFLOWTABLE(24);

    static final int NFNL_SUBSYS_NFTABLES = 10;

    private static final NftMessage[] BY_CODE = new NftMessage[64];

    static {
        for (NftMessage m : values()) BY_CODE[m.code] = m;
    }

    private final int code;

    NftMessage(int code) { this.code = code; }

    /** The {@code nlmsg_type} on the wire. */
    int wireType() { return NFNL_SUBSYS_NFTABLES << 8 | code; }

    /**
     * The message for a wire type, or null for other subsystems and for types that never arrive as notifications
     * (the GET requests). The kernel notifies a {@code DESTROY*} command as the matching {@code DEL*}.
     */
    static NftMessage ofWireType(int nlmsgType) {
        if (nlmsgType >> 8 != NFNL_SUBSYS_NFTABLES) return null;
        int code = nlmsgType & 0xff;
        return code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
