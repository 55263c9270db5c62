package io.nftproxy.source;

import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;
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
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A manifest directory as a watched source: created, modified and deleted files become added, updated and deleted
 * objects in the {@link ClusterStore}. Each burst of file events (an editor's write-rename, a ConfigMap's symlink
 * swap) is settled for {@code settle}; then the directory is listed, only the files that changed since their last
 * read are parsed again ({@link ManifestDirectoryIndex}), and the store gets only the objects that changed.
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
    private final ManifestDirectoryIndex index;
    private final WatchService watcher;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile Set<String> lastProblems = Set.of();
    private String lastFailure;
    private WatchKey parentKey;

    public ManifestDirectorySource(Path dir, ClusterStore store, Duration settle) throws IOException {
        this(dir, store, settle, DEFAULT_RESCAN, null);
    }

    /** {@code parse} reads one file (the loader's when null): tests count the files read through it. */
    ManifestDirectorySource(Path dir, ClusterStore store, Duration settle, Duration rescan,
                            Function<Path, ManifestLoader.FileLoad> parse) throws IOException {
        this.dir = dir;
        this.index = new ManifestDirectoryIndex(parse == null ? loader::loadFile : parse, System::currentTimeMillis);
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

    /** Reads the files changed since the last read and records what changed; unusable files keep their last good objects. */
    private void reload() throws IOException {
        List<LoadProblem> listing = new ArrayList<>();
        List<Path> files = loader.files(dir, listing);
        ManifestDirectoryIndex.Changes changes = index.update(files);
        Set<String> seen = new HashSet<>();
        listing.forEach(p -> seen.add(p.toString()));
        index.problems().forEach(p -> seen.add(p.toString()));
        // Only new problems are logged: a bad file stays bad across reloads and must not flood the log.
        for (String p : seen) if (!lastProblems.contains(p)) LOG.warn("manifest problem {}", p);
        lastProblems = Set.copyOf(seen);
        if (lastFailure != null) LOG.info("manifest directory readable again dir={}", dir);
        lastFailure = null;
        record(changes);
    }

    /** Hands the store each changed object, as a watch delivers its events; the store asks for a sync itself. */
    private void record(ManifestDirectoryIndex.Changes changes) {
        if (changes.isEmpty()) return;
        LOG.debug("manifest changes upserted={} removed={}", changes.upserted().size(), changes.removed().size());
        for (Object o : changes.removed()) {
            if (o instanceof ServiceObject x) store.deleteService(x.meta());
            else if (o instanceof EndpointSliceObject x) store.deleteEndpointSlice(x.meta());
            else if (o instanceof NodeObject x) store.deleteNode(x.meta());
            else if (o instanceof ServiceCidrObject x) store.deleteServiceCidr(x.meta());
        }
        for (Object o : changes.upserted()) {
            if (o instanceof ServiceObject x) store.upsertService(x);
            else if (o instanceof EndpointSliceObject x) store.upsertEndpointSlice(x);
            else if (o instanceof NodeObject x) store.upsertNode(x);
            else if (o instanceof ServiceCidrObject x) store.upsertServiceCidr(x);
        }
    }

    /** True when a rescan finds the directory's files changed since the last read (or the directory gone or back). */
    private boolean changedSinceLastRead() {
        try {
            return index.stale(loader.files(dir, new ArrayList<>())) || lastFailure != null;
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
