package io.nftproxy.source;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A manifest directory as a watched source: created, modified and deleted files become added, updated and deleted
 * objects in the {@link ClusterStore}. Each burst of file events (an editor's write-rename, a ConfigMap's symlink
 * swap) is settled for {@code settle} and then the whole directory is re-read; the store itself records only what
 * differs from before.
 *
 * <p>It never goes deaf and never loses objects to a bad moment:
 * <ul>
 * <li>the parent directory is watched too, and the directory is re-checked every {@code rescan} (by the size and
 *     modification time of its files), so a directory removed and recreated, or events the kernel dropped, are
 *     picked up;</li>
 * <li>a file that cannot be used as a whole (malformed, unreadable, over the size limit) or that is empty, as a
 *     file being rewritten in place briefly is, keeps the objects of its last good read, with a warning, until it
 *     parses again or is deleted. Writers should still write a new file and rename it over the old one: a file cut
 *     at a document boundary parses, and then it holds fewer objects;</li>
 * <li>a directory that is gone keeps every object, with a warning, until it is back.</li>
 * </ul>
 */
public final class ManifestDirectorySource implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ManifestDirectorySource.class);
    /** How often the directory is re-checked without any event. */
    public static final Duration DEFAULT_RESCAN = Duration.ofSeconds(5);

    private final Path dir;
    private final ClusterStore store;
    private final Duration settle;
    private final Duration rescan;
    private final ManifestLoader loader = new ManifestLoader();
    private final WatchService watcher;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile Set<String> lastProblems = Set.of();
    /** The last read of each file that could be used, by path. */
    private final Map<Path, ManifestLoader.FileLoad> lastGood = new HashMap<>();
    /** Size and modification time of each file at the last read; a rescan re-reads only when it differs. */
    private Map<Path, List<Object>> lastFingerprint = Map.of();
    private String lastFailure;
    private WatchKey parentKey;

    public ManifestDirectorySource(Path dir, ClusterStore store, Duration settle) throws IOException {
        this(dir, store, settle, DEFAULT_RESCAN);
    }

    public ManifestDirectorySource(Path dir, ClusterStore store, Duration settle, Duration rescan) throws IOException {
        this.dir = dir;
        this.store = store;
        this.settle = settle;
        this.rescan = rescan;
        this.watcher = FileSystems.getDefault().newWatchService();
        reload();
        store.servicesListed();
        store.endpointSlicesListed();
        registerParent();
        registerAll();
        this.thread = new Thread(this::loop, "manifest-watch");
        thread.setDaemon(true);
        thread.start();
    }

    /** The problems of the last read, each logged once when it first appeared (duplicates, malformed files, ...). */
    public Set<String> problems() { return lastProblems; }

    /** Reads the directory and records it; files that cannot be used now keep their last good objects. */
    private void reload() throws IOException {
        List<LoadProblem> problems = new ArrayList<>();
        List<Path> files = loader.files(dir, problems);
        Map<Path, List<Object>> fingerprint = fingerprint(files);
        List<ManifestLoader.FileLoad> loads = new ArrayList<>();
        Set<Path> present = new HashSet<>(files);
        for (Path f : files) {
            ManifestLoader.FileLoad now = loader.loadFile(f);
            ManifestLoader.FileLoad good = lastGood.get(f);
            boolean empty = now.objects().isEmpty() && now.problems().isEmpty() && isEmpty(f);
            if ((now.unusable() || empty) && good != null && !good.objects().isEmpty()) {
                loads.add(good.keptDespite(empty ? withProblem(now, "empty") : now));
            } else {
                loads.add(now);
                if (!now.unusable()) lastGood.put(f, now);
            }
        }
        // A deleted file's objects go with it.
        lastGood.keySet().retainAll(present);
        LoadResult r = loader.merge(loads, problems);
        Set<String> seen = new HashSet<>();
        r.problems().forEach(p -> seen.add(p.toString()));
        // Only new problems are logged: a bad file stays bad across reloads and must not flood the log.
        for (String p : seen) if (!lastProblems.contains(p)) LOG.warn("manifest problem {}", p);
        lastProblems = Set.copyOf(seen);
        lastFingerprint = fingerprint;
        if (lastFailure != null) LOG.info("manifest directory readable again dir={}", dir);
        lastFailure = null;
        store.replaceAll(r.snapshot());
    }

    private static ManifestLoader.FileLoad withProblem(ManifestLoader.FileLoad f, String message) {
        return new ManifestLoader.FileLoad(f.file(), f.objects(), List.of(LoadProblem.ofFile(f.file(), -1, message)),
                f.ignored(), true);
    }

    private static boolean isEmpty(Path f) {
        try {
            return Files.size(f) == 0;
        } catch (IOException e) {
            return false;
        }
    }

    private static Map<Path, List<Object>> fingerprint(List<Path> files) {
        Map<Path, List<Object>> out = new HashMap<>();
        for (Path f : files) {
            try {
                BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
                out.put(f, List.of(a.size(), a.lastModifiedTime(), String.valueOf(a.fileKey())));
            } catch (IOException e) {
                out.put(f, List.of());
            }
        }
        return out;
    }

    /** True when a rescan finds the directory's files changed since the last read (or the directory gone or back). */
    private boolean changedSinceLastRead() {
        try {
            return !Objects.equals(fingerprint(loader.files(dir, new ArrayList<>())), lastFingerprint) || lastFailure != null;
        } catch (IOException e) {
            return lastFailure == null;
        }
    }

    private void registerParent() {
        Path parent = dir.toAbsolutePath().getParent();
        if (parent == null) return;
        try {
            // Creation and deletion (a rename in or out is one too) are all a recreated directory makes here.
            parentKey = parent.register(watcher, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
        } catch (IOException e) {
            LOG.debug("cannot watch the manifest directory's parent dir={} error={}; the rescan finds a recreated directory",
                    parent, e.toString());
        }
    }

    private void registerAll() throws IOException {
        if (!Files.isDirectory(dir)) return;
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                d.register(watcher, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY,
                        StandardWatchEventKinds.ENTRY_DELETE);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    private void loop() {
        while (running) {
            try {
                WatchKey key = watcher.poll(rescan.toMillis(), TimeUnit.MILLISECONDS);
                if (key == null) {
                    if (!changedSinceLastRead()) continue;
                    LOG.debug("manifest rescan found changes dir={}", dir);
                } else {
                    if (!drain(key)) continue;
                    settle();
                }
                registerAll();
                reload();
            } catch (ClosedWatchServiceException | InterruptedException e) {
                return;
            } catch (IOException | RuntimeException e) {
                String failure = e.toString();
                // Logged once per cause: a directory that stays gone must not log every rescan.
                if (!failure.equals(lastFailure)) {
                    LOG.warn("manifest reload failed dir={} error={}; every object stays as last read until it reads again",
                            dir, failure);
                }
                lastFailure = failure;
            }
        }
    }

    /**
     * Keeps draining until the directory has been quiet for the settle time. Only the directory's own events count:
     * a busy parent (/tmp, say) would otherwise keep the settle going for ever.
     */
    private void settle() throws InterruptedException {
        long deadline = System.nanoTime() + settle.toNanos();
        for (long left = settle.toNanos(); left > 0; left = deadline - System.nanoTime()) {
            WatchKey more = watcher.poll(left, TimeUnit.NANOSECONDS);
            if (more == null) return;
            if (drain(more)) deadline = System.nanoTime() + settle.toNanos();
        }
    }

    /**
     * Consumes a key's events; the reset re-arms it (a directory that vanished just stays unarmed). True unless all
     * were the parent's events about siblings of the directory.
     */
    private boolean drain(WatchKey key) {
        List<java.nio.file.WatchEvent<?>> events = key.pollEvents();
        key.reset();
        LOG.debug("manifest events={}", events.size());
        if (key != parentKey) return true;
        Path name = dir.getFileName();
        for (java.nio.file.WatchEvent<?> e : events) {
            if (e.kind() == StandardWatchEventKinds.OVERFLOW || name == null || name.equals(e.context())) return true;
        }
        return false;
    }

    @Override public void close() throws IOException {
        running = false;
        watcher.close();
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
