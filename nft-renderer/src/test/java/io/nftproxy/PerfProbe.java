package io.nftproxy;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.diff.Differ;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;
import io.nftproxy.render.Renderer;

public class PerfProbe {
    public static void main(String[] a) {
        int n = Integer.parseInt(a[0]);
        TestClusters c = TestClusters.cluster();
        for (int i = 0; i < n; i++) {
            String name = "svc" + i;
            c.service(TestClusters.svc("ns" + (i % 50), name).clusterIP("172." + (16 + i / 65536) + "." + ((i / 256) % 256) + "." + (i % 256)).port("http", "TCP", 80).build());
            TestClusters.Slice s = TestClusters.slice("ns" + (i % 50), name, name + "-x").port("http", "TCP", 8080);
            for (int e = 0; e < 10; e++) s.ready("10." + (i / 6000) + "." + ((i / 25) % 240) + "." + (e + 10 * (i % 25)), "other");
            c.slice(s.build());
        }
        ClusterSnapshot snap = c.snapshot();
        for (int iter = 0; iter < 3; iter++) {
            long p0 = System.nanoTime();
            io.nftproxy.service.ProxyState st = io.nftproxy.service.ProxyStateBuilder.build(snap, IpFamily.IPV4, "node-a");
            long p1 = System.nanoTime();
            Renderer.upstream().render(st, TestClusters.node());
            long p2 = System.nanoTime();
            System.out.printf("state=%dms renderState=%dms%n", (p1 - p0) / 1000000, (p2 - p1) / 1000000);
        }
        for (int iter = 0; iter < 5; iter++) {
            long t0 = System.nanoTime();
            TableContent t = Renderer.upstream().render(snap, TestClusters.node()).table(IpFamily.IPV4);
            long t1 = System.nanoTime();
            Differ.Diff d = Differ.diff(t, t);
            long t2 = System.nanoTime();
            String script = Transaction.creating(t).script(Capabilities.baseline());
            long t3 = System.nanoTime();
            System.out.printf("n=%d render=%dms diff(noop)=%dms script=%dms (%d bytes, %d rules) heap=%dMB%n", n, (t1 - t0) / 1000000, (t2 - t1) / 1000000, (t3 - t2) / 1000000, script.length(), t.ruleCount(),
                    (Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory()) >> 20);
        }
    }
}
