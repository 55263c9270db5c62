package io.nftproxy.it.net;

import io.nftproxy.demo.EchoServer;
import io.nftproxy.netlink.KernelTests;
import io.nftproxy.demo.Probe;
import io.nftproxy.demo.Topology;
import io.nftproxy.service.LocalTraffic;
import io.nftproxy.render.Renderer;
import io.nftproxy.render.TableLayout;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.util.ArrayList;
import java.util.Optional;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static io.nftproxy.TestAddresses.*;
import static io.nftproxy.it.net.TestNetworks.*;
import static io.nftproxy.it.net.TrafficServices.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kube-proxy's interface detectors decide the masquerade of pod traffic to a ClusterIP by where the packet entered
 * the node, not by its source address. The node's pod veths are vp0, vp1 (pods a and b) and vp2 (the pod client);
 * its uplink is eth0. The same pod client, the same source address, is masqueraded or not as the detector says.
 * NodeCIDR's detector is this node's pod range (what the daemon takes from the Node object's spec.podCIDRs): a pod
 * of the other node, inside the cluster range, no longer counts as local.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocalTrafficDetectorTrafficTest {
    private Topology topology;
    private final List<EchoServer> servers = new ArrayList<>();

    @BeforeAll
    void buildTopology() throws Exception {
        KernelTests.assumeAvailableAnd(Optional.ofNullable(Topology.unavailabilityCause()));
        topology = Topology.build(TestNetworks.plan("tl"));
        for (Topology.Host b : topology.backends()) servers.add(EchoServer.start(b.thread(), b.role(), BACKEND_TCP_PORT, BACKEND_UDP_PORT));
    }

    @AfterAll
    void tearDown() throws Exception {
        try {
            for (EchoServer s : servers) s.close();
        } finally {
            if (topology != null) topology.close();
        }
    }

    @Test
    void interfaceNamePrefixOfThePodVethsKeepsThePodsAddress() throws Exception {
        program(LocalTraffic.byInterface("vp", true));
        assertEquals(Set.of(POD_CLIENT), peers(clusterIpFromThePodClient()), "entered on vp2: a pod's, not masqueraded");
    }

    @Test
    void aPrefixThePodVethsDoNotHaveMasqueradesThem() throws Exception {
        program(LocalTraffic.byInterface("eth", true));
        List<Probe.Outcome> out = clusterIpFromThePodClient();
        assertTrue(!peers(out).contains(POD_CLIENT), () -> "vp2 is not eth*: the pod client must be masqueraded, peers " + peers(out));
        for (Probe.Outcome o : out) assertEquals(o.backend().equals("remote-pod") ? NODE_IP : NODE_POD_GATEWAY, o.peer(), o::toString);
    }

    @Test
    void bridgeInterfaceCountsOnlyThatInterface() throws Exception {
        program(LocalTraffic.byInterface("vp2", false));
        assertEquals(Set.of(POD_CLIENT), peers(clusterIpFromThePodClient()));
        program(LocalTraffic.byInterface("vp0", false));
        assertTrue(!peers(clusterIpFromThePodClient()).contains(POD_CLIENT), "vp2 is not the bridge vp0: masqueraded");
    }

    /**
     * externalTrafficPolicy Local NodePort: a pod's connection short-circuits to every endpoint, anyone else's goes to
     * this node's endpoints only, keeping its address. Under NodeCIDR the remote pod is "anyone else".
     */
    @Test
    void nodeCidrCountsOnlyThisNodesPodsAsLocal() throws Exception {
        program(LocalTraffic.bySource(List.of(io.nftproxy.net.IpPrefix.parse(POD_CIDR), io.nftproxy.net.IpPrefix.parse(POD_CIDR6))));
        List<Probe.Outcome> remote = Probe.from(topology.host("remote-pod")).tcp(NODE_IP, WEB_LOCAL_NODE_PORT, 24);
        List<Probe.Outcome> failed = remote.stream().filter(o -> !o.replied()).toList();
        assertTrue(failed.isEmpty(), () -> failed.size() + " of " + remote.size() + " got no reply, e.g. " + failed.get(0));
        assertEquals(Set.of("pod-a", "pod-b"), remote.stream().map(Probe.Outcome::backend).collect(Collectors.toSet()),
                "the other node's pod is not local: this node's endpoints only");
        assertEquals(Set.of(OTHER_POD), peers(remote), "its address is kept");
        List<Probe.Outcome> local = Probe.from(topology.podClient()).tcp(NODE_IP, WEB_LOCAL_NODE_PORT, 24);
        assertTrue(local.stream().allMatch(Probe.Outcome::replied), local::toString);
        assertEquals(Set.of("pod-a", "pod-b", "remote-pod"), local.stream().map(Probe.Outcome::backend).collect(Collectors.toSet()),
                "this node's pod short-circuits to every endpoint");
        assertEquals(Set.of(POD_CLIENT), peers(local));
    }

    private void program(LocalTraffic detector) throws Exception {
        Renderer.Rendering r = new Renderer(TableLayout.UPSTREAM).render(TrafficServices.snapshot(), TestNetworks.nodeContext(detector));
        assertTrue(r.diagnostics().isEmpty(), () -> r.diagnostics().toString());
        topology.program(r);
    }

    private List<Probe.Outcome> clusterIpFromThePodClient() throws Exception {
        List<Probe.Outcome> out = Probe.from(topology.podClient()).tcp(WEB, HTTP, 24);
        List<Probe.Outcome> failed = out.stream().filter(o -> !o.replied()).toList();
        assertTrue(failed.isEmpty(), () -> failed.size() + " of " + out.size() + " got no reply, e.g. " + failed.get(0));
        assertEquals(Set.of("pod-a", "pod-b", "remote-pod"), out.stream().map(Probe.Outcome::backend).collect(Collectors.toSet()));
        return out;
    }

    private static Set<String> peers(List<Probe.Outcome> out) {
        return out.stream().map(Probe.Outcome::peer).collect(Collectors.toCollection(TreeSet::new));
    }
}
