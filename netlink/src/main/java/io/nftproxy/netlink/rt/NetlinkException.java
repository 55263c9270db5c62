package io.nftproxy.netlink.rt;

import io.nftproxy.netlink.LibC;


import java.io.IOException;

/**
 * A failed netlink system call or a netlink error reply, with the errno kept so callers can tell an overrun
 * ({@code ENOBUFS}) or a permission problem from the rest without parsing the message.
 */
public final class NetlinkException extends IOException {
    private final int errno;

    public NetlinkException(String call, int errno) {
        super(call + ": " + LibC.Holder.describe(errno));
        this.errno = errno;
    }

    public int errno() { return errno; }

    /** The socket's receive queue overflowed and the kernel dropped messages (multicast listeners only). */
    public boolean isOverrun() { return errno == LibC.ENOBUFS; }
}
