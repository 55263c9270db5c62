package io.nftproxy.source;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ManifestDirectorySourceTest {
    private static String service(String name, String ip) {
        return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + ", namespace: demo}\n"
                + "spec: {clusterIP: " + ip + ", ports: [{name: http, port: 80}]}\n";
    }

    @Test
    void fileCreateModifyDeleteBecomeStoreChanges(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), service("a", "172.30.0.1"));
        ClusterStore store = new ClusterStore();
        try (ManifestDirectorySource src = new ManifestDirectorySource(dir, store, Duration.ofMillis(50))) {
            assertTrue(store.ready(), "a directory is listed as soon as it is read");
            assertEquals(1, store.snapshot().services().size());

            Files.createDirectories(dir.resolve("sub"));
            Files.writeString(dir.resolve("sub/b.yaml"), service("b", "172.30.0.2"));
            await().atMost(Duration.ofSeconds(10)).until(() -> store.snapshot().services().size() == 2);

            Files.writeString(dir.resolve("a.yaml"), service("a", "172.30.0.9"));
            await().atMost(Duration.ofSeconds(10)).until(() -> store.snapshot().services().stream()
                    .anyMatch(s -> s.clusterIP().equals("172.30.0.9")));

            Files.delete(dir.resolve("sub/b.yaml"));
            await().atMost(Duration.ofSeconds(10)).until(() -> store.snapshot().services().size() == 1);

            // A broken file is skipped and the rest stays loaded.
            Files.writeString(dir.resolve("broken.yaml"), "kind: Service\n  bad: [");
            long before = store.changeCount();
            Files.writeString(dir.resolve("c.yaml"), service("c", "172.30.0.3"));
            await().atMost(Duration.ofSeconds(10)).until(() -> store.snapshot().services().size() == 2);
            assertTrue(store.changeCount() > before);
        }
    }
}
