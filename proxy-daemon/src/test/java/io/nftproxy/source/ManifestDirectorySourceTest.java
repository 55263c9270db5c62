package io.nftproxy.source;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
        AtomicLong changeCount = new AtomicLong();
        store.onChange(changeCount::incrementAndGet);
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
            long before = changeCount.get();
            Files.writeString(dir.resolve("c.yaml"), service("c", "172.30.0.3"));
            await().atMost(Duration.ofSeconds(10)).until(() -> store.snapshot().services().size() == 2);
            assertTrue(changeCount.get() > before);
        }
    }

    private static List<String> clusterIPs(ClusterStore store) {
        return store.snapshot().services().stream().map(s -> s.meta().name() + "=" + s.clusterIP()).sorted().toList();
    }

    /** Waits past several settle periods, so that a reload that was going to happen has happened. */
    private static void settled() throws InterruptedException { Thread.sleep(600); }

    @Test
    void aChangeParsesOnlyTheChangedFileAndADeleteParsesNone(@TempDir Path dir) throws Exception {
        for (int i = 0; i < 50; i++) Files.writeString(dir.resolve("svc-" + i + ".yaml"), service("s" + i, "172.30.1." + (i + 1)));
        Thread.sleep(150);   // a read less than 100 ms after a file's mtime would be repeated at the next reload
        ClusterStore store = new ClusterStore();
        ManifestLoader loader = new ManifestLoader();
        List<Path> parsed = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        // The daemon's settle time: longer than the 100 ms after its mtime within which a read is repeated next time.
        try (ManifestDirectorySource src = new ManifestDirectorySource(dir, store, Duration.ofMillis(200), Duration.ofHours(1),
                f -> {
                    parsed.add(f.getFileName());
                    return loader.loadFile(f);
                })) {
            assertEquals(50, parsed.size());
            assertEquals(50, store.snapshot().services().size());
            parsed.clear();
            long events = store.changeCounts().serviceEvents();

            Files.writeString(dir.resolve("svc-7.yaml"), service("s7", "172.30.1.99"));
            await().atMost(Duration.ofSeconds(10)).until(() -> clusterIPs(store).contains("s7=172.30.1.99"));
            settled();
            assertEquals(Set.of(Path.of("svc-7.yaml")), Set.copyOf(parsed), "only the edited file is parsed again");
            assertEquals(events + 1, store.changeCounts().serviceEvents(), "the store is handed that one Service");

            parsed.clear();
            Files.delete(dir.resolve("svc-8.yaml"));
            await().atMost(Duration.ofSeconds(10)).until(() -> store.snapshot().services().size() == 49);
            settled();
            assertEquals(List.of(), parsed);
            assertFalse(clusterIPs(store).contains("s8=172.30.1.9"));
        }
    }

    @Test
    void aDirectoryRemovedAndRecreatedIsWatchedAgain(@TempDir Path parent) throws Exception {
        Path dir = Files.createDirectory(parent.resolve("manifests"));
        Files.writeString(dir.resolve("a.yaml"), service("a", "172.30.0.1"));
        ClusterStore store = new ClusterStore();
        // No rescan within the test: the parent's watch alone must see the new directory.
        try (ManifestDirectorySource src = new ManifestDirectorySource(dir, store, Duration.ofMillis(50), Duration.ofHours(1), null)) {
            Files.delete(dir.resolve("a.yaml"));
            Files.delete(dir);
            settled();
            assertEquals(List.of("a=172.30.0.1"), clusterIPs(store), "a vanished directory keeps every object");

            Files.createDirectory(dir);
            Files.writeString(dir.resolve("b.yaml"), service("b", "172.30.0.2"));
            await().atMost(Duration.ofSeconds(10)).until(() -> clusterIPs(store).equals(List.of("b=172.30.0.2")));
            Files.writeString(dir.resolve("b.yaml"), service("b", "172.30.0.3"));
            await().atMost(Duration.ofSeconds(10)).until(() -> clusterIPs(store).equals(List.of("b=172.30.0.3")));
        }
    }

    @Test
    void theRescanFindsChangesWhoseEventsWereMissed(@TempDir Path parent) throws Exception {
        Path dir = Files.createDirectory(parent.resolve("manifests"));
        Files.writeString(dir.resolve("a.yaml"), service("a", "172.30.0.1"));
        ClusterStore store = new ClusterStore();
        try (ManifestDirectorySource src = new ManifestDirectorySource(dir, store, Duration.ofMillis(50), Duration.ofMillis(200), null)) {
            // A directory moved in from elsewhere: its files were never watched, only the rescan sees them.
            Path elsewhere = Files.createDirectory(parent.resolve("elsewhere"));
            Files.writeString(elsewhere.resolve("b.yaml"), service("b", "172.30.0.2"));
            Files.move(elsewhere, dir.resolve("sub"));
            await().atMost(Duration.ofSeconds(10)).until(() -> clusterIPs(store).size() == 2);
            Files.writeString(dir.resolve("sub/b.yaml"), service("b", "172.30.0.9"));
            await().atMost(Duration.ofSeconds(10)).until(() -> clusterIPs(store).contains("b=172.30.0.9"));
        }
    }

    @Test
    void aFileThatStopsParsingKeepsItsLastGoodObjectsUntilItParsesAgain(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), service("a", "172.30.0.1") + "---\n" + service("a2", "172.30.0.4"));
        Files.writeString(dir.resolve("b.yaml"), service("b", "172.30.0.2"));
        ClusterStore store = new ClusterStore();
        try (ManifestDirectorySource src = new ManifestDirectorySource(dir, store, Duration.ofMillis(50), Duration.ofHours(1), null)) {
            Files.writeString(dir.resolve("a.yaml"), "kind: Service\n  bad: [", StandardOpenOption.APPEND);
            Files.writeString(dir.resolve("b.yaml"), service("b", "172.30.0.3"));
            await().atMost(Duration.ofSeconds(10)).until(() -> clusterIPs(store).contains("b=172.30.0.3"));
            assertEquals(List.of("a2=172.30.0.4", "a=172.30.0.1", "b=172.30.0.3"), clusterIPs(store),
                    "a.yaml's objects stay while it is malformed");

            Files.writeString(dir.resolve("a.yaml"), service("a", "172.30.0.5"));
            await().atMost(Duration.ofSeconds(10)).until(() -> clusterIPs(store).equals(List.of("a=172.30.0.5", "b=172.30.0.3")));
        }
    }

    @Test
    void aDuplicateServiceInTwoFilesIsReportedAsRenderReportsIt(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), service("web", "172.30.0.1"));
        Files.writeString(dir.resolve("b.yaml"), service("web", "172.30.0.2"));
        ClusterStore store = new ClusterStore();
        try (ManifestDirectorySource src = new ManifestDirectorySource(dir, store, Duration.ofMillis(50), Duration.ofHours(1), null)) {
            assertEquals(List.of("web=172.30.0.1"), clusterIPs(store), "the first file's object is kept");
            String problem = String.join("\n", src.problems());
            assertTrue(problem.contains("b.yaml") && problem.contains("a.yaml") && problem.contains("demo/web"), problem);
            // Gone with the duplicate.
            Files.delete(dir.resolve("b.yaml"));
            await().atMost(Duration.ofSeconds(10)).until(() -> src.problems().isEmpty());
        }
    }

    @Test
    void aFileRewrittenInPlaceIsNeverSeenEmpty(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), service("a", "172.30.0.1"));
        ClusterStore store = new ClusterStore();
        AtomicLong changeCount = new AtomicLong();
        store.onChange(changeCount::incrementAndGet);
        try (ManifestDirectorySource src = new ManifestDirectorySource(dir, store, Duration.ofMillis(50), Duration.ofHours(1), null)) {
            long changes = changeCount.get();
            // Truncated, as "> file" does before the writer's first byte, then half a document.
            Files.write(dir.resolve("a.yaml"), new byte[0]);
            settled();
            assertEquals(List.of("a=172.30.0.1"), clusterIPs(store));
            Files.writeString(dir.resolve("a.yaml"), "apiVersion: v1\nkind: Service\nmetadata: {name: a, namesp");
            settled();
            assertEquals(List.of("a=172.30.0.1"), clusterIPs(store));
            assertEquals(changes, changeCount.get(), "the store saw no change at all");

            Files.writeString(dir.resolve("a.yaml"), service("a", "172.30.0.7"));
            await().atMost(Duration.ofSeconds(10)).until(() -> clusterIPs(store).equals(List.of("a=172.30.0.7")));
            // Deleting the file is how its objects go.
            Files.delete(dir.resolve("a.yaml"));
            await().atMost(Duration.ofSeconds(10)).until(() -> clusterIPs(store).isEmpty());
        }
    }

    @Test
    void aBusyParentDirectoryDoesNotHoldChangesBack(@TempDir Path parent) throws Exception {
        Path dir = Files.createDirectory(parent.resolve("manifests"));
        Files.writeString(dir.resolve("a.yaml"), service("a", "172.30.0.1"));
        ClusterStore store = new ClusterStore();
        java.util.concurrent.atomic.AtomicBoolean busy = new java.util.concurrent.atomic.AtomicBoolean(true);
        // Siblings come and go every 10 ms, as in /tmp: far more often than the 50 ms settle time.
        Thread noise = new Thread(() -> {
            for (int i = 0; i < 1000 && busy.get(); i++) {
                try {
                    Path f = parent.resolve("sibling-" + (i % 5));
                    if (Files.exists(f)) Files.delete(f);
                    else Files.writeString(f, "x");
                    Thread.sleep(10);
                } catch (Exception e) {
                    return;
                }
            }
        });
        try (ManifestDirectorySource src = new ManifestDirectorySource(dir, store, Duration.ofMillis(50), Duration.ofHours(1), null)) {
            noise.start();
            Files.writeString(dir.resolve("a.yaml"), service("a", "172.30.0.2"));
            await().atMost(Duration.ofSeconds(3)).until(() -> clusterIPs(store).equals(List.of("a=172.30.0.2")));
        } finally {
            busy.set(false);
            noise.join(5000);
        }
    }
}
