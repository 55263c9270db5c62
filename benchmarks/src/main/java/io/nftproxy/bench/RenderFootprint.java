package io.nftproxy.bench;

import io.nftproxy.nft.Transaction;
import io.nftproxy.nft.Capabilities;
import io.nftproxy.net.IpFamily;
import io.nftproxy.service.ProxyState;
import io.nftproxy.sync.TableModel;
import io.nftproxy.render.Renderer;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Memory after a full render, in a fresh JVM: peak RSS (VmHWM) and live heap after a full GC, with the model, the
 * incremental renderer's cache and the cold-start script all alive, as a daemon holds them after its first sync.
 * Usage: {@code RenderFootprint services endpointsPerService}; run with the heap flags under test.
 */
public final class RenderFootprint {
    private RenderFootprint() {}

    public static void main(String[] args) throws IOException {
        int n = Integer.parseInt(args[0]);
        int eps = Integer.parseInt(args[1]);
        ProxyState state = new BenchCluster(eps).state(n);
        TableModel inc = new TableModel(Renderer.upstream(), IpFamily.IPV4, BenchCluster.node());
        long t0 = System.nanoTime();
        Transaction tx = inc.sync(state, BenchCluster.node()).transaction();
        String script = tx.script(Capabilities.baseline());
        long t1 = System.nanoTime();
        System.gc();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long gcMs = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) gcMs += gc.getCollectionTime();
        ApplyLatency.report("n=%d x %d: render+diff+script %.0f ms, live heap after GC %d MiB, peak RSS %s, GC time %d ms, max heap %d MiB (%d commands, %d bytes of script)%n",
                n, eps, ApplyLatency.ms(t1 - t0), heap >> 20, peakRss(), gcMs, Runtime.getRuntime().maxMemory() >> 20,
                tx.size(), script.length());
        if (inc.servicePortCount() != n) throw new IllegalStateException("rendered " + inc.servicePortCount());
    }

    private static String peakRss() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("VmHWM:")) return l.substring(6).trim();
        }
        return "unknown";
    }
}
