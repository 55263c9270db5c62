package io.nftproxy.netlink.rt;

import io.nftproxy.netlink.LibC;
import io.nftproxy.netlink.NetworkNamespace;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Consumer;

/**
 * Tells when the node's interface addresses change (rtnetlink {@code RTNLGRP_IPV4_IFADDR} and
 * {@code RTNLGRP_IPV6_IFADDR}), so {@code nodeport-ips} follows an address that was added or removed at once rather
 * than at the next periodic sync. It only signals; the listener re-reads the addresses with {@link AddressDump}.
 * An overrun is reported as a change too: something happened and was lost. Like the other netlink classes it does
 * not log: a socket failure goes to {@code onFailure}, after which nothing more is reported.
 */
public final class AddressMonitor implements AutoCloseable {
    static final int RTNLGRP_IPV4_IFADDR = 5;
    static final int RTNLGRP_IPV6_IFADDR = 9;
    static final int RTM_DELADDR = 21;

    private final NetlinkSocket socket;
    private final Thread reader;
    private volatile boolean running = true;

    private AddressMonitor(NetlinkSocket socket, Runnable onChange, Consumer<Exception> onFailure) {
        this.socket = socket;
        this.reader = new Thread(() -> read(onChange, onFailure), "address-monitor");
        reader.setDaemon(true);
    }

    /** Starts watching {@code netns}. */
    public static AddressMonitor start(NetworkNamespace netns, Runnable onChange, Consumer<Exception> onFailure) throws IOException {
        NetlinkSocket s = netns.call(AddressMonitor::open);
        AddressMonitor m = new AddressMonitor(s, onChange, onFailure);
        m.reader.start();
        return m;
    }

    private static NetlinkSocket open() throws IOException {
        return NetlinkSocket.open(LibC.NETLINK_ROUTE, s -> {
            s.joinGroup(RTNLGRP_IPV4_IFADDR);
            s.joinGroup(RTNLGRP_IPV6_IFADDR);
            s.setReceiveTimeout(200);
        });
    }

    private void read(Runnable onChange, Consumer<Exception> onFailure) {
        ByteBuffer buf = ByteBuffer.allocateDirect(32 << 10).order(ByteOrder.nativeOrder());
        while (running) {
            try {
                long n = socket.receiveWaiting(buf);
                if (n > 0 && containsAddressMessage(buf)) onChange.run();
            } catch (NetlinkException e) {
                if (!running) return;
                if (e.isOverrun()) {
                    onChange.run();
                } else {
                    onFailure.accept(e);
                    return;
                }
            } catch (IOException | RuntimeException e) {
                if (running) onFailure.accept(e);
                return;
            }
        }
    }

    static boolean containsAddressMessage(ByteBuffer buf) {
        int pos = 0;
        while (pos + NetlinkDump.NLMSG_HDRLEN <= buf.limit()) {
            int len = buf.getInt(pos);
            int type = buf.getShort(pos + 4) & 0xffff;
            if (type == AddressDump.RTM_NEWADDR || type == RTM_DELADDR) return true;
            if (len < NetlinkDump.NLMSG_HDRLEN) return false;
            pos += NetlinkDump.align(len);
        }
        return false;
    }

    @Override public void close() {
        running = false;
        try {
            reader.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        socket.close();
    }
}
