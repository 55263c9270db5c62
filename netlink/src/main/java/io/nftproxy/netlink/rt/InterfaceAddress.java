package io.nftproxy.netlink.rt;

import io.nftproxy.net.IpAddress;
import io.nftproxy.net.IpFamily;

/**
 * One address of one interface, as {@code RTM_NEWADDR} reports it. {@code scope} is the kernel's
 * {@code rtm_scope} ({@code RT_SCOPE_UNIVERSE} 0, link 253, host 254).
 */
public record InterfaceAddress(int ifindex, IpFamily family, IpAddress address, int prefixLength, int scope) {
    public static final int RT_SCOPE_UNIVERSE = 0;
    public static final int RT_SCOPE_SITE = 200;
    public static final int RT_SCOPE_LINK = 253;
    public static final int RT_SCOPE_HOST = 254;
    public static final int RT_SCOPE_NOWHERE = 255;

    /** The scope as iproute2 prints it: {@code global}, {@code site}, {@code link}, {@code host}, {@code nowhere}, or the number. */
    public String scopeName() {
        switch (scope) {
            case RT_SCOPE_UNIVERSE: return "global";
            case RT_SCOPE_SITE: return "site";
            case RT_SCOPE_LINK: return "link";
            case RT_SCOPE_HOST: return "host";
            case RT_SCOPE_NOWHERE: return "nowhere";
            default: return Integer.toString(scope);
        }
    }

    @Override public String toString() {
        return address + "/" + prefixLength + " ifindex " + ifindex + " scope " + scopeName();
    }
}
