package io.nftproxy.it.api;

import io.nftproxy.netlink.KernelNamespace;

import java.io.IOException;
import java.time.Duration;

/** What a packet to a ClusterIP meets first: how many Services the kernel's {@code service-ips} map holds now. */
final class ServiceIpsMap {
    private ServiceIpsMap() {}

    /** Elements of {@code ip kube-proxy service-ips} in {@code node}; 0 when the map or the table is missing. */
    static int count(KernelNamespace node) {
        try {
            KernelNamespace.Result r = node.exec(Duration.ofSeconds(60), null, "nft", "list", "map", "ip", "kube-proxy", "service-ips");
            if (!r.ok()) return 0;
            int c = 0;
            for (int i = r.stdout().indexOf(": goto service-"); i >= 0; i = r.stdout().indexOf(": goto service-", i + 1)) c++;
            return c;
        } catch (IOException e) {
            return 0;
        }
    }
}
