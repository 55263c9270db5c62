package io.nftproxy.source;

import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;

import tools.jackson.databind.node.JsonNodeFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Maps API-format objects onto the raw {@code io.nftproxy.cluster} records, field for field. It checks types
 * only; values (addresses, names, ports) stay unvalidated for {@link io.nftproxy.proxy.ProxyStateBuilder}. Where
 * the API server would default a field that changes meaning when absent, the default is applied here, so a
 * hand-written manifest means what {@code kubectl apply} of it would.
 */
final class ApiObjectDecoder {
    static final String DEFAULT_NAMESPACE = "default";

    private ApiObjectDecoder() {}

    static ObjectMeta meta(ApiNode obj, boolean namespaced) {
        ApiNode m = obj.obj("metadata");
        if (m == null) throw new ManifestFormatException("metadata", "missing");
        String name = m.str("name");
        if (name == null || name.isEmpty()) throw new ManifestFormatException("metadata.name", "missing");
        String ns = null;
        if (namespaced) {
            ns = m.str("namespace");
            if (ns == null || ns.isEmpty()) ns = DEFAULT_NAMESPACE;
        }
        boolean deleting = m.has("deletionTimestamp");
        // Read leniently: a YAML timestamp a hand-written manifest left unquoted is not worth losing the object for.
        var created = m.raw().get("creationTimestamp");
        String creationTimestamp = created != null && created.isString() ? created.stringValue() : null;
        return new ObjectMeta(ns, name, m.strMap("labels"), m.strMap("annotations"), deleting, creationTimestamp);
    }

    static ServiceObject service(ApiNode obj) {
        ObjectMeta meta = meta(obj, true);
        ApiNode spec = obj.obj("spec");
        if (spec == null) spec = new ApiNode(JsonNodeFactory.instance.objectNode(), "spec");
        List<ServiceObject.PortSpec> ports = new ArrayList<>();
        for (ApiNode p : spec.objList("ports")) {
            ports.add(new ServiceObject.PortSpec(p.str("name"), p.str("protocol"), p.integer("port"),
                    p.intOrString("targetPort"), p.integer("nodePort")));
        }
        Integer affinityTimeout = null;
        ApiNode sac = spec.obj("sessionAffinityConfig");
        if (sac != null) {
            ApiNode clientIP = sac.obj("clientIP");
            if (clientIP != null) affinityTimeout = clientIP.integer("timeoutSeconds");
        }
        List<ServiceObject.LoadBalancerIngress> ingress = new ArrayList<>();
        ApiNode status = obj.obj("status");
        ApiNode lb = status == null ? null : status.obj("loadBalancer");
        if (lb != null) {
            for (ApiNode i : lb.objList("ingress")) {
                ingress.add(new ServiceObject.LoadBalancerIngress(i.str("ip"), i.str("hostname"), i.str("ipMode")));
            }
        }
        String type = spec.str("type");
        return new ServiceObject(meta, type == null ? "ClusterIP" : type, spec.str("clusterIP"), spec.strList("clusterIPs"),
                spec.strList("ipFamilies"), ports, spec.strList("externalIPs"), ingress,
                spec.strList("loadBalancerSourceRanges"), spec.str("sessionAffinity"), affinityTimeout,
                spec.str("externalTrafficPolicy"), spec.str("internalTrafficPolicy"), spec.integer("healthCheckNodePort"),
                spec.str("trafficDistribution"));
    }

    static EndpointSliceObject endpointSlice(ApiNode obj) {
        ObjectMeta meta = meta(obj, true);
        List<EndpointSliceObject.PortSpec> ports = new ArrayList<>();
        for (ApiNode p : obj.objList("ports")) {
            // The API server defaults an unset port name to "" (the unnamed port); keep that meaning.
            String name = p.str("name");
            ports.add(new EndpointSliceObject.PortSpec(name == null ? "" : name, p.str("protocol"), p.integer("port")));
        }
        List<EndpointSliceObject.Endpoint> endpoints = new ArrayList<>();
        for (ApiNode e : obj.objList("endpoints")) {
            ApiNode c = e.obj("conditions");
            Boolean ready = c == null ? null : c.bool("ready");
            Boolean serving = c == null ? null : c.bool("serving");
            Boolean terminating = c == null ? null : c.bool("terminating");
            List<String> zoneHints = new ArrayList<>();
            List<String> nodeHints = new ArrayList<>();
            ApiNode hints = e.obj("hints");
            if (hints != null) {
                for (ApiNode z : hints.objList("forZones")) zoneHints.add(z.str("name"));
                for (ApiNode n : hints.objList("forNodes")) nodeHints.add(n.str("name"));
            }
            endpoints.add(new EndpointSliceObject.Endpoint(e.strList("addresses"), ready, serving, terminating,
                    e.str("nodeName"), e.str("zone"), zoneHints, nodeHints));
        }
        return new EndpointSliceObject(meta, obj.str("addressType"), ports, endpoints);
    }

    static NodeObject node(ApiNode obj) {
        ObjectMeta meta = meta(obj, false);
        List<NodeObject.Address> addresses = new ArrayList<>();
        ApiNode status = obj.obj("status");
        if (status != null) {
            for (ApiNode a : status.objList("addresses")) addresses.add(new NodeObject.Address(a.str("type"), a.str("address")));
        }
        List<String> taints = new ArrayList<>();
        List<String> podCIDRs = List.of();
        ApiNode spec = obj.obj("spec");
        if (spec != null) {
            for (ApiNode t : spec.objList("taints")) taints.add(t.str("key"));
            podCIDRs = spec.strList("podCIDRs");
        }
        return new NodeObject(meta, addresses, taints, podCIDRs);
    }

    static ServiceCidrObject serviceCidr(ApiNode obj) {
        ObjectMeta meta = meta(obj, false);
        ApiNode spec = obj.obj("spec");
        return new ServiceCidrObject(meta, spec == null ? List.of() : spec.strList("cidrs"));
    }
}
