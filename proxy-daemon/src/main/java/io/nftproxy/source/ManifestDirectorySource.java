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
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A manifest directory as a watched source: created, modified and deleted files become added, updated and deleted
 * objects in the {@link ClusterStore}. Each burst of file events (an editor's write-rename, a ConfigMap's symlink
 * swap) is settled for {@code settle} and then the whole directory is re-read, so a half-written file never loads;
 * the store itself records only what differs from before.
 */
public final class ManifestDirectorySource implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ManifestDirectorySource.class);

    private final Path dir;
    private final ClusterStore store;
    private final Duration settle;
    private final ManifestLoader loader = new ManifestLoader();
    private final WatchService watcher;
    private final Thread thread;
    private volatile boolean running = true;
    private Set<String> lastProblems = Set.of();

    public ManifestDirectorySource(Path dir, ClusterStore store, Duration settle) throws IOException {
        this.dir = dir;
        this.store = store;
        this.settle = settle;
        this.watcher = FileSystems.getDefault().newWatchService();
        reload();
        store.servicesListed();
        store.endpointSlicesListed();
        registerAll();
        this.thread = new Thread(this::loop, "manifest-watch");
        thread.setDaemon(true);
        thread.start();
    }

    /** Loads the directory once and records it; the first call also makes the store ready. */
    private void reload() throws IOException {
        LoadResult r = loader.load(dir);
        Set<String> problems = new HashSet<>();
        r.problems().forEach(p -> problems.add(p.toString()));
        // Only new problems are logged: a bad file stays bad across reloads and must not flood the log.
        for (String p : problems) if (!lastProblems.contains(p)) LOG.warn("manifest problem {}", p);
        lastProblems = problems;
        store.replaceAll(r.snapshot());
    }

    private void registerAll() throws IOException {
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
                WatchKey key = watcher.take();
                drain(key);
                // Settle: keep draining until the directory has been quiet for the settle time.
                WatchKey more;
                while ((more = watcher.poll(settle.toMillis(), TimeUnit.MILLISECONDS)) != null) drain(more);
                registerAll();
                reload();
            } catch (ClosedWatchServiceException | InterruptedException e) {
                return;
            } catch (IOException | RuntimeException e) {
                LOG.warn("manifest reload failed dir={} error={}", dir, e.toString());
            }
        }
    }

    /** Consumes a key's events; the reset re-arms it (a directory that vanished just stays unarmed). */
    private static void drain(WatchKey key) {
        List<?> events = key.pollEvents();
        LOG.debug("manifest events={}", events.size());
        key.reset();
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
