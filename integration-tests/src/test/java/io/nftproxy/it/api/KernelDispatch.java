package io.nftproxy.it.api;

import io.nftproxy.TestClusters;
import io.nftproxy.net.Protocol;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Value;
import io.nftproxy.trace.Origin;
import io.nftproxy.trace.Packet;
import io.nftproxy.trace.PacketTracer;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where a table read back from the kernel sends the first TCP packet from a pod to a service address, in whatever
 * table layout it was written: the packet tracer walks the kernel's own objects (a per-service chain, or the flat
 * layout's shared sets and maps), so a test asks about behaviour, not about chain names.
 */
final class KernelDispatch {
    /** A pod address outside every test's endpoint ranges: only the DNAT decision is read, not the masquerade. */
    private static final String CLIENT = "10.249.0.9";

    private KernelDispatch() {}

    /** The DNAT targets ({@code ip/port}) of a packet to {@code ip:port}; empty when the table does not DNAT it. */
    static Set<String> targets(TableContent table, String ip, int port) {
        Set<String> out = new TreeSet<>();
        Packet p = Packet.of(Origin.POD, CLIENT, ip, Protocol.TCP, port);
        for (String hostPort : PacketTracer.trace(table, TestClusters.node(), p).dnatOdds().keySet()) {
            int colon = hostPort.lastIndexOf(':');
            out.add(hostPort.substring(0, colon) + "/" + hostPort.substring(colon + 1));
        }
        return out;
    }

    /** The targets of every TCP address and port {@code service-ips} holds, by {@code ip:port}. */
    static Map<String, Set<String>> all(TableContent table) {
        Map<String, Set<String>> out = new LinkedHashMap<>();
        for (Element e : table.elements("service-ips").values()) {
            if (!(e.key().get(0) instanceof Value.Addr a) || !(e.key().get(1) instanceof Value.Proto pr)
                    || pr.protocol() != Protocol.TCP || !(e.key().get(2) instanceof Value.Port port)) continue;
            out.put(a.ip() + ":" + port.port(), targets(table, a.ip().toString(), port.port()));
        }
        return out;
    }
}
