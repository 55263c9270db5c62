package io.nftproxy.config;

import java.time.Duration;

/**
 * kube-proxy's {@code conntrack} settings: what the daemon sets the node's conntrack sysctls to at start (and
 * {@code run --init-only} alone); its rules are {@link ProxyConfig#validate()}'s. Zero means "leave the sysctl as
 * it is", as in kube-proxy; the defaults are kube-proxy's, which its own defaulting applies to a null or absent field.
 *
 * @param maxPerCore             nf_conntrack_max is this times the number of CPUs (0: leave the limit alone)
 * @param min                    ...but at least this
 * @param tcpBeLiberal           nf_conntrack_tcp_be_liberal = 1 when true; false leaves it alone
 */
public record ConntrackSettings(int maxPerCore, int min, Duration tcpEstablishedTimeout, Duration tcpCloseWaitTimeout,
                                boolean tcpBeLiberal, Duration udpTimeout, Duration udpStreamTimeout) {
    public static final ConntrackSettings DEFAULT = new ConntrackSettings(32768, 131072, Duration.ofHours(24),
            Duration.ofHours(1), false, Duration.ZERO, Duration.ZERO);

    public ConntrackSettings withMaxPerCore(int v) { return new ConntrackSettings(v, min, tcpEstablishedTimeout, tcpCloseWaitTimeout, tcpBeLiberal, udpTimeout, udpStreamTimeout); }
    public ConntrackSettings withMin(int v) { return new ConntrackSettings(maxPerCore, v, tcpEstablishedTimeout, tcpCloseWaitTimeout, tcpBeLiberal, udpTimeout, udpStreamTimeout); }
    public ConntrackSettings withTcpEstablishedTimeout(Duration v) { return new ConntrackSettings(maxPerCore, min, v, tcpCloseWaitTimeout, tcpBeLiberal, udpTimeout, udpStreamTimeout); }
    public ConntrackSettings withTcpCloseWaitTimeout(Duration v) { return new ConntrackSettings(maxPerCore, min, tcpEstablishedTimeout, v, tcpBeLiberal, udpTimeout, udpStreamTimeout); }
    public ConntrackSettings withTcpBeLiberal(boolean v) { return new ConntrackSettings(maxPerCore, min, tcpEstablishedTimeout, tcpCloseWaitTimeout, v, udpTimeout, udpStreamTimeout); }
    public ConntrackSettings withUdpTimeout(Duration v) { return new ConntrackSettings(maxPerCore, min, tcpEstablishedTimeout, tcpCloseWaitTimeout, tcpBeLiberal, v, udpStreamTimeout); }
    public ConntrackSettings withUdpStreamTimeout(Duration v) { return new ConntrackSettings(maxPerCore, min, tcpEstablishedTimeout, tcpCloseWaitTimeout, tcpBeLiberal, udpTimeout, v); }
}
