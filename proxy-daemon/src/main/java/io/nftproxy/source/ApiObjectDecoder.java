package io.nftproxy.source;

import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Maps API-format objects onto the raw {@code io.nftproxy.cluster} records, field for field. It checks types
 * only; values (addresses, names, ports) stay unvalidated for {@link io.nftproxy.service.ProxyStateBuilder}. Where
 * the API server would default a field that changes meaning when absent, the default is applied here, so a
 * hand-written manifest means what {@code kubectl apply} of it would.
 */
final class ApiObjectDecoder {
    static final String DEFAULT_NAMESPACE = "default";
    /**
     * The annotations anything reads. The rest are not kept: a {@code kubectl apply}'d object carries its whole last
     * applied manifest as one, a copy per Service held for nothing, and a change to it alone is no change to the proxy.
     */
    static final Set<String> KEPT_ANNOTATIONS = Set.of(EndpointSliceObject.TRIGGER_TIME_ANNOTATION);

    private ApiObjectDecoder() {}

    static ObjectMeta meta(ApiNode obj, boolean namespaced) {
        ApiNode m = obj.obj("metadata");
        if (m == null) throw new ManifestFormatException("metadata", "missing");
        String name = m.str("name");
        if (name == null || name.isEmpty()) throw new ManifestFormatException("metadata.name", "missing");
        String ns = null;
        if (namespaced) {
            ns = m.sharedStr("namespace");
            if (ns == null || ns.isEmpty()) ns = DEFAULT_NAMESPACE;
        }
        boolean deleting = m.has("deletionTimestamp");
        // Read leniently: a YAML timestamp a hand-written manifest left unquoted is not worth losing the object for.
        var created = m.raw().get("creationTimestamp");
        String creationTimestamp = created != null && created.isString() ? created.stringValue() : null;
        return new ObjectMeta(ns, name, m.strMap("labels"), m.strMap("annotations", KEPT_ANNOTATIONS::contains), deleting,
                creationTimestamp);
    }

    static ServiceObject service(ApiNode obj) {
        ObjectMeta meta = meta(obj, true);
        ApiNode spec = obj.objOrEmpty("spec");
        List<ServiceObject.PortSpec> ports = spec.objList("ports", p -> new ServiceObject.PortSpec(p.sharedStr("name"),
                p.sharedStr("protocol"), p.integer("port"), p.intOrString("targetPort"), p.integer("nodePort")));
        Integer affinityTimeout = spec.objOrEmpty("sessionAffinityConfig").objOrEmpty("clientIP").integer("timeoutSeconds");
        List<ServiceObject.LoadBalancerIngress> ingress = obj.objOrEmpty("status").objOrEmpty("loadBalancer").objList("ingress",
                i -> new ServiceObject.LoadBalancerIngress(i.str("ip"), i.str("hostname"), i.str("ipMode")));
        String type = spec.sharedStr("type");
        return new ServiceObject(meta, type == null ? "ClusterIP" : type, spec.str("clusterIP"), spec.strList("clusterIPs"),
                spec.sharedStrList("ipFamilies"), ports, spec.strList("externalIPs"), ingress,
                spec.strList("loadBalancerSourceRanges"), spec.sharedStr("sessionAffinity"), affinityTimeout,
                spec.sharedStr("externalTrafficPolicy"), spec.sharedStr("internalTrafficPolicy"), spec.integer("healthCheckNodePort"),
                spec.str("trafficDistribution"));
    }

    static EndpointSliceObject endpointSlice(ApiNode obj) {
        ObjectMeta meta = meta(obj, true);
        // The API server defaults an unset port name to "" (the unnamed port); keep that meaning.
        List<EndpointSliceObject.PortSpec> ports = obj.objList("ports", p -> new EndpointSliceObject.PortSpec(
                Objects.requireNonNullElse(p.sharedStr("name"), ""), p.sharedStr("protocol"), p.integer("port")));
        List<EndpointSliceObject.Endpoint> endpoints = obj.objList("endpoints", e -> {
            ApiNode c = e.objOrEmpty("conditions");
            Boolean ready = c.bool("ready");
            Boolean serving = c.bool("serving");
            Boolean terminating = c.bool("terminating");
            ApiNode hints = e.objOrEmpty("hints");
            List<String> zoneHints = hints.objList("forZones", z -> z.str("name"));
            List<String> nodeHints = hints.objList("forNodes", n -> n.str("name"));
            return new EndpointSliceObject.Endpoint(e.strList("addresses"), ready, serving, terminating,
                    e.sharedStr("nodeName"), e.sharedStr("zone"), zoneHints, nodeHints);
        });
        return new EndpointSliceObject(meta, obj.sharedStr("addressType"), ports, endpoints);
    }

    static NodeObject node(ApiNode obj) {
        ObjectMeta meta = meta(obj, false);
        List<NodeObject.Address> addresses = obj.objOrEmpty("status").objList("addresses",
                a -> new NodeObject.Address(a.str("type"), a.str("address")));
        ApiNode spec = obj.objOrEmpty("spec");
        return new NodeObject(meta, addresses, spec.objList("taints", t -> t.str("key")), spec.strList("podCIDRs"));
    }

    static ServiceCidrObject serviceCidr(ApiNode obj) {
        return new ServiceCidrObject(meta(obj, false), obj.objOrEmpty("spec").strList("cidrs"));
    }
}
