package io.nftproxy.source;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceObject;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ClusterStoreTest {
    private static ServiceObject svc(String name, String ip) {
        return new ServiceObject(ObjectMeta.of("ns", name), "ClusterIP", ip, null, null,
                List.of(new ServiceObject.PortSpec("http", "TCP", 80, null, null)), null, null, null, null, null, null, null, null, null);
    }

    private static EndpointSliceObject slice(String name, String trigger) {
        Map<String, String> ann = trigger == null ? Map.of() : Map.of(EndpointSliceObject.TRIGGER_TIME_ANNOTATION, trigger);
        return new EndpointSliceObject(new ObjectMeta("ns", name, Map.of(EndpointSliceObject.SERVICE_NAME_LABEL, "a"), ann, false),
                "IPv4", List.of(), List.of());
    }

    @Test
    void notReadyUntilServicesAndSlicesAreBothListed() {
        ClusterStore s = new ClusterStore();
        assertFalse(s.ready());
        s.servicesListed();
        assertFalse(s.ready());
        s.endpointSlicesListed();
        assertTrue(s.ready());
    }

    @Test
    void onlyRealChangesRequestASync() {
        ClusterStore s = new ClusterStore();
        AtomicInteger calls = new AtomicInteger();
        s.onChange(calls::incrementAndGet);
        s.upsertService(svc("a", "172.30.0.1"));
        s.upsertService(svc("a", "172.30.0.1"));
        assertEquals(1, calls.get(), "an identical update is a no-op");
        s.upsertService(svc("a", "172.30.0.2"));
        assertEquals(2, calls.get());
        s.deleteService(ObjectMeta.of("ns", "missing"));
        assertEquals(2, calls.get(), "deleting what is not there is a no-op");
        s.deleteService(ObjectMeta.of("ns", "a"));
        assertEquals(3, calls.get());
        assertTrue(s.snapshot().services().isEmpty());
    }

    @Test
    void replaceAllRecordsOnlyTheDifference() {
        ClusterStore s = new ClusterStore();
        AtomicInteger calls = new AtomicInteger();
        s.replaceAll(new ClusterSnapshot(List.of(svc("a", "172.30.0.1"), svc("b", "172.30.0.2")), List.of(), List.of(), List.of()));
        s.onChange(calls::incrementAndGet);
        s.replaceAll(new ClusterSnapshot(List.of(svc("b", "172.30.0.2"), svc("a", "172.30.0.1")), List.of(), List.of(), List.of()));
        assertEquals(0, calls.get(), "same content in another order");
        s.replaceAll(new ClusterSnapshot(List.of(svc("b", "172.30.0.2")), List.of(), List.of(), List.of()));
        assertEquals(1, calls.get());
        assertEquals(List.of("b"), s.snapshot().services().stream().map(x -> x.meta().name()).toList());
    }

    @Test
    void triggerTimesAreDrainedOncePerChangedSlice() {
        ClusterStore s = new ClusterStore();
        s.upsertEndpointSlice(slice("a-1", "2026-12-02T10:00:00Z"));
        s.upsertEndpointSlice(slice("a-1", "2026-12-02T10:00:00Z"));
        s.upsertEndpointSlice(slice("a-2", "not a time"));
        assertEquals(List.of(Instant.parse("2026-12-02T10:00:00Z")), s.drainTriggerTimes());
        assertTrue(s.drainTriggerTimes().isEmpty());
    }

    private static EndpointSliceObject labelled(String name, String service) {
        return new EndpointSliceObject(new ObjectMeta("ns", name, Map.of(EndpointSliceObject.SERVICE_NAME_LABEL, service), Map.of(), false),
                "IPv4", List.of(), List.of());
    }

    @Test
    void recordsWhichServicesChangedUntilDrained() {
        ClusterStore s = new ClusterStore();
        assertEquals(java.util.Set.of(ServiceChanges.Wide.WHOLE_CLUSTER), s.drainChanges().wide(), "the first drain hands over the whole cluster");
        assertEquals(io.nftproxy.source.ServiceChanges.NONE, s.drainChanges());
        s.upsertService(svc("a", "172.30.0.1"));
        s.upsertService(svc("a", "172.30.0.1"));
        s.upsertEndpointSlice(labelled("b-1", "b"));
        assertEquals(java.util.Set.of("ns/a", "ns/b"), s.drainChanges().services());
        assertEquals(List.of(labelled("b-1", "b")), s.endpointSlices("ns/b"));

        s.upsertEndpointSlice(labelled("b-1", "c"));
        assertEquals(java.util.Set.of("ns/b", "ns/c"), s.drainChanges().services(), "a relabelled slice changes both Services");
        assertEquals(List.of(), s.endpointSlices("ns/b"));
        assertEquals(List.of(labelled("b-1", "c")), s.endpointSlices("ns/c"));

        s.deleteEndpointSlice(ObjectMeta.of("ns", "b-1"));
        s.deleteService(ObjectMeta.of("ns", "a"));
        assertEquals(java.util.Set.of("ns/a", "ns/c"), s.drainChanges().services());
        assertEquals(java.util.Set.of(), s.serviceKeys());

        s.upsertNode(new io.nftproxy.cluster.NodeObject(ObjectMeta.of(null, "n1"), List.of(), List.of(), List.of()));
        assertEquals(java.util.Set.of(ServiceChanges.Wide.NODE), s.drainChanges().wide(), "a Node change is reported as one");
        s.upsertServiceCidr(new io.nftproxy.cluster.ServiceCidrObject(ObjectMeta.of(null, "kubernetes"), List.of("172.30.0.0/16")));
        s.deleteNode(ObjectMeta.of(null, "n1"));
        assertEquals(java.util.Set.of(ServiceChanges.Wide.NODE, ServiceChanges.Wide.SERVICE_CIDRS), s.drainChanges().wide());
        assertEquals(ServiceChanges.NONE, s.drainChanges());
    }

    @Test
    void replaceAllRecordsOnlyTheServicesThatDiffer() {
        ClusterStore s = new ClusterStore();
        s.replaceAll(new ClusterSnapshot(List.of(svc("a", "172.30.0.1"), svc("b", "172.30.0.2")),
                List.of(labelled("a-1", "a")), List.of(), List.of()));
        s.drainChanges();
        s.replaceAll(new ClusterSnapshot(List.of(svc("a", "172.30.0.1"), svc("b", "172.30.0.3")),
                List.of(labelled("a-1", "a"), labelled("c-1", "c")), List.of(), List.of()));
        assertEquals(java.util.Set.of("ns/b", "ns/c"), s.drainChanges().services());
        s.replaceAll(new ClusterSnapshot(List.of(svc("b", "172.30.0.3")), List.of(labelled("c-1", "c")), List.of(), List.of()));
        assertEquals(java.util.Set.of("ns/a"), s.drainChanges().services());
        assertEquals(java.util.Set.of("ns/b", "ns/c"), s.serviceKeys());
    }
}
