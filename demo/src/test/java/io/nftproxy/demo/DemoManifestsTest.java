package io.nftproxy.demo;

import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.source.LoadResult;
import io.nftproxy.source.ManifestLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The demo's manifest handling without a kernel: the embedded copy of examples/, and the scale-down edit. */
class DemoManifestsTest {
    private static final Path EXAMPLES = Path.of("..", "examples");

    @TempDir Path dir;

    @Test
    void theEmbeddedManifestsAreTheExamplesManifests() throws Exception {
        List<Path> written = EmbeddedManifests.extractTo(dir);
        List<Path> expected;
        try (Stream<Path> s = Files.walk(EXAMPLES)) {
            expected = s.filter(p -> p.toString().matches(".*\\.(yaml|yml|json)")).map(EXAMPLES::relativize).sorted().toList();
        }
        assertEquals(expected, written);
        for (Path p : expected) assertEquals(Files.readString(EXAMPLES.resolve(p)), Files.readString(dir.resolve(p)), p::toString);
    }

    @Test
    void removingAnEndpointLeavesTheOtherTwoAndEveryOtherObject() throws Exception {
        Files.createDirectories(dir.resolve("demo"));
        Path hello = dir.resolve(DemoCluster.HELLO_MANIFEST);
        Files.copy(EXAMPLES.resolve(DemoCluster.HELLO_MANIFEST), hello);

        assertEquals(1, EndpointRemoval.remove(hello, DemoCluster.HELLO, DemoCluster.SCALED_AWAY.address()));

        LoadResult load = new ManifestLoader().load(dir);
        assertEquals(List.of(), load.problems());
        assertEquals(1, load.snapshot().services().size());
        EndpointSliceObject slice = load.snapshot().endpointSlices().get(0);
        List<String> left = slice.endpoints().stream().flatMap(e -> e.addresses().stream()).toList();
        assertEquals(List.of("172.20.172.15", "172.20.211.48"), left);
        assertEquals(List.of("k8s-node-2", "k8s-node-1"), slice.endpoints().stream().map(EndpointSliceObject.Endpoint::nodeName).toList());
        try (Stream<Path> files = Files.list(dir.resolve("demo"))) {
            assertEquals(List.of(hello), files.toList(), "no temporary file left beside it");
        }
    }

    @Test
    void anAddressNoSliceListsLeavesTheFileUntouched() throws Exception {
        Files.createDirectories(dir.resolve("demo"));
        Path hello = dir.resolve(DemoCluster.HELLO_MANIFEST);
        Files.copy(EXAMPLES.resolve(DemoCluster.HELLO_MANIFEST), hello);
        String before = Files.readString(hello);
        assertEquals(0, EndpointRemoval.remove(hello, DemoCluster.HELLO, "172.20.9.9"));
        assertEquals(0, EndpointRemoval.remove(hello, "hello-np", DemoCluster.SCALED_AWAY.address()));
        assertEquals(before, Files.readString(hello));
    }
}
