package io.nftproxy.source;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

import static io.nftproxy.source.ManifestLoader.kind;
import static io.nftproxy.source.ManifestLoader.meta;
import static io.nftproxy.source.ManifestLoader.name;

/**
 * A manifest directory's objects kept file by file, so that a change re-reads only the files that changed and
 * yields only the objects that changed. Re-reading the whole directory on each change made a burst of 1,000 changes
 * to 5,000 files parse every file again, the daemon's largest source of garbage (issue 11, docs/benchmarks.md).
 *
 * <p>A file is re-read when its size, modification time or identity ({@code fileKey}: a rename over it, a
 * ConfigMap's symlink swap) differs from its last read, or when that read came so soon after the modification time
 * that a second write within the same timestamp tick would look the same ({@link #TRUST_AFTER_FINE}).
 *
 * <p>The objects are those {@link ManifestLoader#merge} of the whole directory would give: for each kind and name,
 * the first in path order (file order within a file), the others reported as duplicates. A file that cannot be used
 * now, or is empty, keeps the objects of its last good read until it parses again or is deleted. Used by one thread.
 */
final class ManifestDirectoryIndex {
    /**
     * How long after its modification time a read is trusted to have seen the last write of that tick, for a file
     * system with sub-second timestamps (Linux: a jiffy, at most 10 ms) and for one without (FAT: 2 s).
     */
    static final long TRUST_AFTER_FINE = 100;
    static final long TRUST_AFTER_COARSE = 2_000;

    /** What an update changed: objects new or different, and objects gone (as last recorded). */
    record Changes(List<Object> upserted, List<Object> removed) {
        Changes {
            upserted = List.copyOf(upserted);
            removed = List.copyOf(removed);
        }

        boolean isEmpty() { return upserted.isEmpty() && removed.isEmpty(); }
    }

    /** A file as stat saw it before it was read. */
    record Fingerprint(long size, FileTime modified, Object fileKey) {
        /** Null when the file cannot be stat'ed: it is then read every time (and reports why it cannot be). */
        static Fingerprint of(Path f) {
            try {
                BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
                return new Fingerprint(a.size(), a.lastModifiedTime(), a.fileKey());
            } catch (IOException e) {
                return null;
            }
        }

        /** True when a read that started at {@code readAt} (ms) saw every write stamped {@link #modified}. */
        boolean settledBy(long readAt) {
            boolean fine = modified.toInstant().getNano() != 0;
            return modified.toMillis() + (fine ? TRUST_AFTER_FINE : TRUST_AFTER_COARSE) < readAt;
        }
    }

    /** One file's last read: its fingerprint, what it contributes now, and its last usable read (or null). */
    private record Entry(Fingerprint fingerprint, boolean trusted, ManifestLoader.FileLoad contributed,
                         ManifestLoader.FileLoad lastGood) {
        boolean unchanged(Fingerprint now) { return trusted && fingerprint.equals(now); }
    }

    private record FileChange(Path file, ManifestLoader.FileLoad before, ManifestLoader.FileLoad after) {}

    private final Function<Path, ManifestLoader.FileLoad> parse;
    private final LongSupplier clock;
    private final Map<Path, Entry> files = new HashMap<>();
    /** For each {@code Kind namespace/name}: the files holding it in path order, each with its copies in file order. */
    private final Map<String, TreeMap<Path, List<Object>>> holders = new HashMap<>();
    /** The duplicate problems of each name held more than once. */
    private final Map<String, List<LoadProblem>> duplicates = new HashMap<>();

    ManifestDirectoryIndex(Function<Path, ManifestLoader.FileLoad> parse, LongSupplier clock) {
        this.parse = parse;
        this.clock = clock;
    }

    /** Brings the index to the directory's manifest files now; returns what changed in its objects. */
    Changes update(List<Path> present) {
        List<FileChange> changed = new ArrayList<>();
        for (Path f : present) {
            Entry old = files.get(f);
            long readAt = clock.getAsLong();
            Fingerprint fp = Fingerprint.of(f);
            if (old != null && old.unchanged(fp)) continue;
            Entry now = read(f, fp, readAt, old == null ? null : old.lastGood());
            files.put(f, now);
            ManifestLoader.FileLoad before = old == null ? null : old.contributed();
            if (!now.contributed().equals(before)) changed.add(new FileChange(f, before, now.contributed()));
        }
        // Every present file has its entry now, so any more are of files deleted since.
        if (files.size() > present.size()) {
            Set<Path> kept = new HashSet<>(present);
            for (var it = files.entrySet().iterator(); it.hasNext(); ) {
                var e = it.next();
                if (kept.contains(e.getKey())) continue;
                changed.add(new FileChange(e.getKey(), e.getValue().contributed(), null));
                it.remove();
            }
        }
        return apply(changed);
    }

    /** True when {@link #update} would re-read anything: a file added, removed, changed or not yet trusted. */
    boolean stale(List<Path> present) {
        if (present.size() != files.size()) return true;
        for (Path f : present) {
            Entry e = files.get(f);
            if (e == null || !e.unchanged(Fingerprint.of(f))) return true;
        }
        return false;
    }

    /** Every file's problems (in no particular order) and the duplicates across files. */
    List<LoadProblem> problems() {
        List<LoadProblem> out = new ArrayList<>();
        for (Entry e : files.values()) out.addAll(e.contributed().problems());
        for (List<LoadProblem> d : duplicates.values()) out.addAll(d);
        return out;
    }

    private Entry read(Path f, Fingerprint fp, long readAt, ManifestLoader.FileLoad good) {
        ManifestLoader.FileLoad now = parse.apply(f);
        boolean trusted = fp != null && fp.settledBy(readAt);
        boolean empty = now.objects().isEmpty() && now.problems().isEmpty() && isEmpty(f);
        if ((now.unusable() || empty) && good != null && !good.objects().isEmpty()) {
            return new Entry(fp, trusted, good.keptDespite(empty ? ManifestLoader.FileLoad.unusable(f, -1, "empty") : now), good);
        }
        return new Entry(fp, trusted, now, now.unusable() ? good : now);
    }

    private Changes apply(List<FileChange> changed) {
        if (changed.isEmpty()) return new Changes(List.of(), List.of());
        // Every name the changed files held or hold, with what it was before any of them changed.
        Map<String, Object> before = new LinkedHashMap<>();
        for (FileChange c : changed) {
            for (ManifestLoader.FileLoad l : new ManifestLoader.FileLoad[] {c.before(), c.after()}) {
                if (l == null) continue;
                for (Object o : l.objects()) {
                    String name = name(o);
                    if (!before.containsKey(name)) before.put(name, winner(name));   // null: no such object yet
                }
            }
        }
        for (FileChange c : changed) {
            if (c.before() != null) unhold(c.file(), c.before());
            if (c.after() != null) hold(c.file(), c.after());
        }
        List<Object> upserted = new ArrayList<>();
        List<Object> removed = new ArrayList<>();
        for (Map.Entry<String, Object> e : before.entrySet()) {
            Object now = winner(e.getKey());
            if (now == null) {
                if (e.getValue() != null) removed.add(e.getValue());
            } else if (!now.equals(e.getValue())) {
                upserted.add(now);
            }
            recountDuplicates(e.getKey());
        }
        return new Changes(upserted, removed);
    }

    private void hold(Path file, ManifestLoader.FileLoad load) {
        for (Object o : load.objects()) {
            holders.computeIfAbsent(name(o), k -> new TreeMap<>()).computeIfAbsent(file, k -> new ArrayList<>()).add(o);
        }
    }

    private void unhold(Path file, ManifestLoader.FileLoad load) {
        for (Object o : load.objects()) {
            String name = name(o);
            TreeMap<Path, List<Object>> h = holders.get(name);
            if (h == null) continue;
            h.remove(file);
            if (h.isEmpty()) holders.remove(name);
        }
    }

    private Object winner(String name) {
        TreeMap<Path, List<Object>> h = holders.get(name);
        return h == null ? null : h.firstEntry().getValue().get(0);
    }

    /** As {@link ManifestLoader#merge} reports them: every copy after the first, naming the file of the first. */
    private void recountDuplicates(String name) {
        TreeMap<Path, List<Object>> h = holders.get(name);
        if (h == null || (h.size() == 1 && h.firstEntry().getValue().size() == 1)) {
            duplicates.remove(name);
            return;
        }
        Path first = h.firstKey();
        Object kept = h.firstEntry().getValue().get(0);
        List<LoadProblem> out = new ArrayList<>();
        for (Map.Entry<Path, List<Object>> e : h.entrySet()) {
            int copies = e.getValue().size() - (e.getKey().equals(first) ? 1 : 0);
            for (int i = 0; i < copies; i++) out.add(LoadProblem.duplicate(e.getKey(), kind(kept), meta(kept).key(), first));
        }
        duplicates.put(name, out);
    }

    private static boolean isEmpty(Path f) {
        try {
            return Files.size(f) == 0;
        } catch (IOException e) {
            return false;
        }
    }
}
