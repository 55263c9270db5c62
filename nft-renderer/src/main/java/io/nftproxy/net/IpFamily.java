package io.nftproxy.net;

/** An IP family, with the spellings nftables and the Kubernetes API use for it. */
public enum IpFamily {
    IPV4("ip", "ipv4_addr", "IPv4", 32, "127.0.0.0/8"),
    IPV6("ip6", "ipv6_addr", "IPv6", 128, "::1");

    private final String nftFamily;
    private final String addrType;
    private final String apiName;
    private final int bits;
    private final String loopback;

    IpFamily(String nftFamily, String addrType, String apiName, int bits, String loopback) {
        this.nftFamily = nftFamily;
        this.addrType = addrType;
        this.apiName = apiName;
        this.bits = bits;
        this.loopback = loopback;
    }

    /** The table family and the payload selector: {@code ip} or {@code ip6}. */
    public String nftFamily() { return nftFamily; }

    /** The set data type: {@code ipv4_addr} or {@code ipv6_addr}. */
    public String addrType() { return addrType; }

    /** {@code IPv4} / {@code IPv6}, as in {@code spec.ipFamilies} and {@code addressType}. */
    public String apiName() { return apiName; }

    public int bits() { return bits; }

    /** The loopback network that NodePort matching excludes: {@code 127.0.0.0/8} or {@code ::1}. */
    public IpPrefix loopback() { return IpPrefix.parse(loopback); }
}
