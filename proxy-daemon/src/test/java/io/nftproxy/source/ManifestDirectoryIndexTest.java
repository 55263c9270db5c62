package io.nftproxy.source;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.ServiceObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ManifestDirectoryIndexTest {
    @TempDir
    Path dir;

    private final ManifestLoader loader = new ManifestLoader();
    private final List<Path> parsed = new ArrayList<>();
    /** The time the index reads the clock at, in ms; each write below stamps the file well before it. */
    private final AtomicLong now = new AtomicLong(1_000_000_000_000L);
    private final ManifestDirectoryIndex index = new ManifestDirectoryIndex(f -> {
        parsed.add(f);
        return loader.loadFile(f);
    }, now::get);
    /** What the index's changes, applied in order, hold: the store's view. */
    private final Map<String, Object> applied = new TreeMap<>();

    private static String service(String name, String ip) {
        return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + ", namespace: demo}\n"
                + "spec: {clusterIP: " + ip + ", ports: [{name: http, port: 80}]}\n";
    }

    /** Writes in place (same inode), stamped {@code ageMs} before the index's clock. */
    private Path write(String name, String text, long ageMs) throws IOException {
        Path p = dir.resolve(name);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text);
        // Sub-millisecond digits: a file system with fine timestamps, as Linux's local ones.
        Files.setLastModifiedTime(p, FileTime.from(java.time.Instant.ofEpochMilli(now.get() - ageMs).plusNanos(1234)));
        return p;
    }

    private Path write(String name, String text) throws IOException { return write(name, text, 10_000); }

    private ManifestDirectoryIndex.Changes update() throws IOException {
        parsed.clear();
        ManifestDirectoryIndex.Changes c = index.update(loader.files(dir, new ArrayList<>()));
        for (Object o : c.removed()) assertTrue(applied.remove(name(o)) != null, "removed " + name(o) + " was there");
        for (Object o : c.upserted()) assertFalse(o.equals(applied.put(name(o), o)), "upserted " + name(o) + " changed");
        return c;
    }

    private static String name(Object o) {
        return ManifestLoader.name(o);
    }

    private List<String> clusterIPs() {
        return applied.values().stream().map(o -> (ServiceObject) o).map(s -> s.meta().name() + "=" + s.clusterIP()).toList();
    }

    private Set<String> problems() {
        return index.problems().stream().map(LoadProblem::toString).collect(Collectors.toSet());
    }

    @Test
    void onlyTheEditedFileIsParsedAgainAndOnlyItsChangeComesOut() throws IOException {
        for (int i = 0; i < 20; i++) write("svc-" + i + ".yaml", service("s" + i, "172.30.0." + (i + 1)));
        assertEquals(20, update().upserted().size());
        assertEquals(20, parsed.size());

        ManifestDirectoryIndex.Changes none = update();
        assertTrue(none.isEmpty(), none.toString());
        assertEquals(List.of(), parsed, "no file changed, none is parsed");

        Path edited = write("svc-7.yaml", service("s7", "172.30.0.99"));
        ManifestDirectoryIndex.Changes one = update();
        assertEquals(List.of(edited), parsed);
        assertEquals(List.of("s7=172.30.0.99"), one.upserted().stream().map(o -> (ServiceObject) o)
                .map(s -> s.meta().name() + "=" + s.clusterIP()).toList());
        assertEquals(List.of(), one.removed());
        assertTrue(clusterIPs().contains("s7=172.30.0.99"));
    }

    @Test
    void aDeletedFileTakesItsObjectsWithoutAnyParse() throws IOException {
        write("a.yaml", service("a", "172.30.0.1") + "---\n" + service("a2", "172.30.0.2"));
        write("b.yaml", service("b", "172.30.0.3"));
        update();
        Files.delete(dir.resolve("a.yaml"));
        ManifestDirectoryIndex.Changes c = update();
        assertEquals(List.of(), parsed);
        assertEquals(2, c.removed().size());
        assertEquals(List.of(), c.upserted());
        assertEquals(List.of("b=172.30.0.3"), clusterIPs());
    }

    @Test
    void aRenameOverTheFileIsReadEvenWithTheSameSizeAndTime() throws IOException {
        Path a = write("a.yaml", service("a", "172.30.0.1"));
        update();
        // An atomic replace by a writer that kept size and time: only the inode tells.
        Path tmp = dir.resolve(".a.yaml.tmp");
        Files.writeString(tmp, service("a", "172.30.0.2"));
        Files.setLastModifiedTime(tmp, Files.getLastModifiedTime(a));
        Files.move(tmp, a, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        update();
        assertEquals(List.of(a), parsed);
        assertEquals(List.of("a=172.30.0.2"), clusterIPs());
    }

    @Test
    void aReadWithinTheTimestampTickIsReadAgainNextTime() throws IOException {
        // Read 5 ms after the file's time stamp: another write in that tick would leave size and time as they are.
        Path a = write("a.yaml", service("a", "172.30.0.1"), 5);
        update();
        assertTrue(index.stale(List.of(a)), "a read this close to the write is not trusted");
        FileTime stamp = Files.getLastModifiedTime(a);
        Files.writeString(a, service("a", "172.30.0.2"));   // in place, the same size, and within the same tick:
        Files.setLastModifiedTime(a, stamp);
        now.addAndGet(1_000);
        update();
        assertEquals(List.of(a), parsed, "the unchanged-looking file is parsed again");
        assertEquals(List.of("a=172.30.0.2"), clusterIPs());
        // Now long after its time stamp: trusted, not parsed again.
        assertFalse(index.stale(List.of(a)));
        update();
        assertEquals(List.of(), parsed);
    }

    @Test
    void wholeSecondTimestampsAreTrustedOnlyTwoSecondsLater() throws IOException {
        Path a = write("a.yaml", service("a", "172.30.0.1"));
        Files.setLastModifiedTime(a, FileTime.fromMillis((now.get() / 1000 - 1) * 1000));   // 1 s old, FAT-like
        update();
        assertTrue(index.stale(List.of(a)));
        now.addAndGet(2_000);
        update();
        assertEquals(List.of(a), parsed);
        assertFalse(index.stale(List.of(a)));
    }

    @Test
    void aBadOrEmptyFileKeepsItsLastGoodObjectsAndADeleteRemovesThem() throws IOException {
        write("a.yaml", service("a", "172.30.0.1"));
        update();
        write("a.yaml", "kind: Service\n  bad: [");
        assertTrue(update().isEmpty());
        assertEquals(List.of("a=172.30.0.1"), clusterIPs());
        assertTrue(problems().stream().anyMatch(p -> p.contains("malformed")), problems().toString());
        assertTrue(problems().stream().anyMatch(p -> p.contains("keeping its 1 objects")), problems().toString());

        write("a.yaml", "");
        assertTrue(update().isEmpty());
        assertTrue(problems().stream().anyMatch(p -> p.contains("reason=\"empty\"")), problems().toString());

        write("a.yaml", service("a", "172.30.0.5"));
        update();
        assertEquals(List.of("a=172.30.0.5"), clusterIPs());
        assertEquals(Set.of(), problems());
        Files.delete(dir.resolve("a.yaml"));
        update();
        assertEquals(List.of(), clusterIPs());
    }

    /**
     * One broken document: a file read before keeps all of its last good objects (it may be half written), while a
     * file never read whole gives the documents that parse, as render does.
     */
    @Test
    void aBrokenDocumentKeepsTheLastGoodReadElseTheDocumentsThatParse() throws IOException {
        write("a.yaml", service("a", "172.30.0.1") + "---\n" + service("b", "172.30.0.2") + "---\n" + service("c", "172.30.0.3"));
        update();
        write("a.yaml", service("a", "172.30.0.1") + "---\nkind: [\n---\n" + service("c", "172.30.0.4"));
        assertTrue(update().isEmpty());
        assertEquals(List.of("a=172.30.0.1", "b=172.30.0.2", "c=172.30.0.3"), clusterIPs());
        assertTrue(problems().stream().anyMatch(p -> p.contains("keeping its 3 objects")), problems().toString());

        write("b.yaml", service("d", "172.30.0.6") + "---\nkind: [\n");
        update();
        assertEquals(List.of("a=172.30.0.1", "b=172.30.0.2", "c=172.30.0.3", "d=172.30.0.6"), clusterIPs());
        assertTrue(problems().stream().anyMatch(p -> p.contains("b.yaml") && p.contains("document=2")), problems().toString());
    }

    @Test
    void aDuplicateGoesToTheNextFileInPathOrderWhenTheFirstGoes() throws IOException {
        write("a.yaml", service("web", "172.30.0.1"));
        write("b.yaml", service("web", "172.30.0.2") + "---\n" + service("web", "172.30.0.3"));
        update();
        assertEquals(List.of("web=172.30.0.1"), clusterIPs());
        assertEquals(problems(), fullRead().problems, "the duplicates as a whole-directory read reports them");

        Files.delete(dir.resolve("a.yaml"));
        update();
        assertEquals(List.of("web=172.30.0.2"), clusterIPs(), "b.yaml's first copy");
        assertEquals(problems(), fullRead().problems);
        write("a.yaml", service("web", "172.30.0.1"));
        update();
        assertEquals(List.of("web=172.30.0.1"), clusterIPs());
        assertEquals(problems(), fullRead().problems);
    }

    /**
     * A random walk of writes, bad writes, truncations, deletions and renames over a few files sharing a few names:
     * after each step the index's changes, applied, must hold what re-reading the whole directory gives (the
     * algorithm before the index), with the same problems, having parsed only the files the step touched.
     */
    @Test
    void aRandomWalkMatchesReReadingTheWholeDirectory() throws IOException {
        Random random = new Random(11);
        FullReread reference = new FullReread();
        String[] files = {"a.yaml", "b.yaml", "sub/c.yaml", "sub/d.json", "e.yml"};
        String[] names = {"web", "db", "cache", "api"};
        for (int step = 0; step < 400; step++) {
            now.addAndGet(1_000);   // every write below gets a time stamp of its own
            String f = files[random.nextInt(files.length)];
            Path p = dir.resolve(f);
            int touched = 1;
            switch (random.nextInt(8)) {
                case 0, 1, 2 -> {
                    StringBuilder text = new StringBuilder();
                    for (int i = random.nextInt(3); i >= 0; i--) {
                        if (text.length() > 0) text.append(f.endsWith(".json") ? "\n" : "---\n");
                        String svc = service(names[random.nextInt(names.length)], "172.30.0." + random.nextInt(4));
                        text.append(f.endsWith(".json") ? toJson(svc) : svc);
                    }
                    write(f, text.toString());
                }
                case 3 -> write(f, f.endsWith(".json") ? "{\"kind\": " : "kind: Service\n  bad: [");
                case 4 -> write(f, "");
                case 5 -> {
                    Files.deleteIfExists(p);
                    touched = 0;
                }
                default -> {
                    String to = files[random.nextInt(files.length)];
                    if (!Files.exists(p) || to.equals(f) || to.endsWith(".json") != f.endsWith(".json")) continue;
                    Files.createDirectories(dir.resolve(to).getParent());
                    Files.move(p, dir.resolve(to), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                }
            }
            update();
            assertTrue(parsed.size() <= touched, "step " + step + " parsed " + parsed);
            FullReread.Result expected = reference.read(dir);
            assertEquals(expected.objects, applied, "step " + step);
            assertEquals(expected.problems, problems(), "step " + step);
        }
    }

    private static String toJson(String serviceYaml) {
        String name = serviceYaml.replaceAll("(?s).*name: (\\w+),.*", "$1");
        String ip = serviceYaml.replaceAll("(?s).*clusterIP: ([0-9.]+),.*", "$1");
        return "{\"apiVersion\": \"v1\", \"kind\": \"Service\", \"metadata\": {\"name\": \"" + name
                + "\", \"namespace\": \"demo\"}, \"spec\": {\"clusterIP\": \"" + ip + "\", \"ports\": [{\"port\": 80}]}}";
    }

    private FullReread.Result fullRead() throws IOException { return new FullReread().read(dir); }

    /** What ManifestDirectorySource did before the index: every file parsed, bad ones keeping their last good read. */
    private static final class FullReread {
        record Result(Map<String, Object> objects, Set<String> problems) {}

        private final ManifestLoader loader = new ManifestLoader();
        private final Map<Path, ManifestLoader.FileLoad> lastGood = new HashMap<>();

        Result read(Path dir) throws IOException {
            List<LoadProblem> listing = new ArrayList<>();
            List<Path> files = loader.files(dir, listing);
            List<ManifestLoader.FileLoad> loads = new ArrayList<>();
            for (Path f : files) {
                ManifestLoader.FileLoad now = loader.loadFile(f);
                ManifestLoader.FileLoad good = lastGood.get(f);
                boolean empty = now.objects().isEmpty() && now.problems().isEmpty() && Files.size(f) == 0;
                if ((now.unusable() || empty) && good != null && !good.objects().isEmpty()) {
                    ManifestLoader.FileLoad cause = empty ? new ManifestLoader.FileLoad(f, List.of(),
                            List.of(LoadProblem.ofFile(f, -1, "empty")), List.of(), true) : now;
                    loads.add(good.keptDespite(cause));
                } else {
                    loads.add(now);
                    if (!now.unusable()) lastGood.put(f, now);
                }
            }
            lastGood.keySet().retainAll(new HashSet<>(files));
            LoadResult r = loader.merge(loads, listing);
            ClusterSnapshot s = r.snapshot();
            Map<String, Object> objects = new TreeMap<>();
            Stream.of(s.services(), s.endpointSlices(), s.nodes(), s.serviceCidrs()).flatMap(List::stream)
                    .forEach(o -> objects.put(name(o), o));
            return new Result(objects, r.problems().stream().map(LoadProblem::toString).collect(Collectors.toSet()));
        }
    }
}
