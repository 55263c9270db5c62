package io.nftproxy.it.diff;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LoadBalancerIngressBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddressBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.ServiceSpecBuilder;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditionsBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointHintsBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.ForNodeBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.ForZoneBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDR;
import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDRBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * A {@link ClusterSnapshot} as API-server objects: every Service (with its load-balancer status), EndpointSlice,
 * Node and ServiceCIDR it holds, written through the API so the server's own defaulting and validation apply, and
 * removed again. The one place where the renderer's cluster model becomes what a real cluster stores. The
 * API server's own ServiceCIDR ({@code kubernetes}, from its flags) is left as it is.
 */
final class ClusterObjects {
    /** Parallel writers: the API server handles them concurrently; one at a time makes 2,000 objects take minutes. */
    private static final int WRITERS = 8;
    /** No ExternalName Service can be stored without one; the proxies never read it. */
    static final String EXTERNAL_NAME = "external.example";

    private final KubernetesClient admin;
    private final List<HasMetadata> written = new ArrayList<>();

    ClusterObjects(KubernetesClient admin) { this.admin = admin; }

    /** Writes {@code cluster}: namespaces first, then Nodes, ServiceCIDRs, Services (then their status) and slices. */
    void write(ClusterSnapshot cluster) throws Exception {
        Set<String> namespaces = new TreeSet<>();
        cluster.services().forEach(s -> namespaces.add(s.meta().namespace()));
        cluster.endpointSlices().forEach(s -> namespaces.add(s.meta().namespace()));
        for (String ns : namespaces) {
            try {
                admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) throw e;
            }
        }
        for (NodeObject n : cluster.nodes()) created(createNode(n));
        for (ServiceCidrObject c : cluster.serviceCidrs()) {
            if (!c.meta().name().equals("kubernetes")) created(admin.resource(serviceCidr(c)).create());
        }
        inParallel(cluster.services(), s -> created(createService(s)));
        inParallel(cluster.endpointSlices(), s -> created(admin.resource(slice(s)).create()));
    }

    /** Recorded as each is written, so a write that fails half-way still leaves {@link #deleteAll} a full list. */
    private HasMetadata created(HasMetadata o) {
        synchronized (written) {
            written.add(o);
        }
        return o;
    }

    /** Deletes everything {@link #write} created. */
    void deleteAll() throws Exception {
        inParallel(List.copyOf(written), o -> {
            admin.resource(o).delete();
            return o;
        });
        written.clear();
    }

    private static <T, R> List<R> inParallel(List<T> items, Function<T, R> write) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
        try {
            List<Future<R>> futures = new ArrayList<>();
            for (T item : items) futures.add(pool.submit(() -> write.apply(item)));
            List<R> out = new ArrayList<>();
            for (Future<R> f : futures) out.add(f.get());
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    private Node createNode(NodeObject n) {
        NodeBuilder b = new NodeBuilder().withMetadata(meta(n.meta())).withNewSpec().withPodCIDRs(n.podCIDRs())
                .withPodCIDR(n.podCIDRs().isEmpty() ? null : n.podCIDRs().get(0))
                .withTaints(n.taintKeys().stream().map(k -> new TaintBuilder().withKey(k).withEffect("NoSchedule").build()).toList())
                .endSpec();
        Node created = admin.nodes().resource(b.build()).create();
        if (n.addresses().isEmpty()) return created;
        return admin.nodes().withName(created.getMetadata().getName()).editStatus(x -> new NodeBuilder(x).editOrNewStatus()
                .withAddresses(n.addresses().stream().map(a -> new NodeAddressBuilder().withType(a.type()).withAddress(a.address()).build()).toList())
                .endStatus().build());
    }

    private Service createService(ServiceObject s) {
        Service created = admin.resource(service(s)).create();
        List<ServiceObject.LoadBalancerIngress> ingress = s.loadBalancerIngress();
        if (ingress.isEmpty()) return created;
        return admin.services().inNamespace(s.meta().namespace()).withName(s.meta().name()).editStatus(x -> new ServiceBuilder(x)
                .editOrNewStatus().withNewLoadBalancer().withIngress(ingress.stream().map(i -> new LoadBalancerIngressBuilder()
                        .withIp(i.ip()).withHostname(i.hostname()).withIpMode(i.ipMode()).build()).toList())
                .endLoadBalancer().endStatus().build());
    }

    static Service service(ServiceObject s) {
        String type = s.type() == null ? "ClusterIP" : s.type();
        boolean external = type.equals("NodePort") || type.equals("LoadBalancer");
        ServiceSpecBuilder spec = new ServiceSpecBuilder().withType(type)
                .withPorts(s.ports().stream().map(p -> new ServicePortBuilder().withName(p.name()).withProtocol(p.protocol())
                        .withPort(p.port()).withNodePort(p.nodePort()).withTargetPort(targetPort(p)).build()).toList())
                .withExternalIPs(s.externalIPs().isEmpty() ? null : s.externalIPs())
                .withLoadBalancerSourceRanges(s.loadBalancerSourceRanges().isEmpty() ? null : s.loadBalancerSourceRanges())
                .withSessionAffinity(s.sessionAffinity())
                .withInternalTrafficPolicy(s.internalTrafficPolicy())
                .withTrafficDistribution(s.trafficDistribution());
        if (type.equals("ExternalName")) {
            spec.withExternalName(EXTERNAL_NAME);
        } else {
            spec.withClusterIP(s.clusterIP()).withClusterIPs(s.clusterIPs().isEmpty() ? null : s.clusterIPs())
                    .withIpFamilies(s.ipFamilies().isEmpty() ? null : s.ipFamilies())
                    .withIpFamilyPolicy(s.ipFamilies().size() > 1 ? "RequireDualStack" : null);
        }
        if (external) spec.withExternalTrafficPolicy(s.externalTrafficPolicy()).withHealthCheckNodePort(s.healthCheckNodePort());
        // A LoadBalancer without node ports (ManifestYaml writes it the same way): left to the API server, it would
        // allocate random ones, which can collide with a node port given to a Service written after it.
        if (type.equals("LoadBalancer") && s.ports().stream().allMatch(p -> p.nodePort() == null)) {
            spec.withAllocateLoadBalancerNodePorts(false);
        }
        if (s.sessionAffinityTimeoutSeconds() != null) {
            spec.withNewSessionAffinityConfig().withNewClientIP().withTimeoutSeconds(s.sessionAffinityTimeoutSeconds())
                    .endClientIP().endSessionAffinityConfig();
        }
        return new ServiceBuilder().withMetadata(meta(s.meta())).withSpec(spec.build()).build();
    }

    private static IntOrString targetPort(ServiceObject.PortSpec p) {
        if (p.targetPort() == null) return new IntOrString(p.port());
        return p.targetPort().matches("\\d+") ? new IntOrString(Integer.parseInt(p.targetPort())) : new IntOrString(p.targetPort());
    }

    static EndpointSlice slice(EndpointSliceObject s) {
        return new EndpointSliceBuilder().withMetadata(meta(s.meta())).withAddressType(s.addressType())
                .withPorts(s.ports().stream().map(p -> new EndpointPortBuilder().withName(p.name()).withProtocol(p.protocol())
                        .withPort(p.port()).build()).toList())
                .withEndpoints(s.endpoints().stream().map(e -> {
                    EndpointBuilder b = new EndpointBuilder().withAddresses(e.addresses()).withNodeName(e.nodeName()).withZone(e.zone())
                            .withConditions(new EndpointConditionsBuilder().withReady(e.ready()).withServing(e.serving())
                                    .withTerminating(e.terminating()).build());
                    if (!e.zoneHints().isEmpty() || !e.nodeHints().isEmpty()) {
                        b.withHints(new EndpointHintsBuilder()
                                .withForZones(e.zoneHints().stream().map(z -> new ForZoneBuilder().withName(z).build()).toList())
                                .withForNodes(e.nodeHints().stream().map(n -> new ForNodeBuilder().withName(n).build()).toList())
                                .build());
                    }
                    return b.build();
                }).toList())
                .build();
    }

    static ServiceCIDR serviceCidr(ServiceCidrObject c) {
        return new ServiceCIDRBuilder().withMetadata(meta(c.meta())).withNewSpec().withCidrs(c.cidrs()).endSpec().build();
    }

    private static io.fabric8.kubernetes.api.model.ObjectMeta meta(ObjectMeta m) {
        return new ObjectMetaBuilder().withNamespace(m.namespace()).withName(m.name())
                .withLabels(m.labels().isEmpty() ? null : m.labels())
                .withAnnotations(m.annotations().isEmpty() ? null : m.annotations()).build();
    }
}
