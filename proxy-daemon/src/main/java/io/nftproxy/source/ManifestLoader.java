package io.nftproxy.source;

import io.nftproxy.cluster.ClusterSnapshot;
import io.nftproxy.cluster.EndpointSliceObject;
import io.nftproxy.cluster.NodeObject;
import io.nftproxy.cluster.ObjectMeta;
import io.nftproxy.cluster.ServiceCidrObject;
import io.nftproxy.cluster.ServiceObject;
import io.nftproxy.config.SyntaxError;
import io.nftproxy.config.UnreadableFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.MappingIterator;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import org.snakeyaml.engine.v2.api.LoadSettings;
import tools.jackson.dataformat.yaml.YAMLFactory;
import tools.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Reads a directory of Kubernetes objects in API format ({@code *.yaml}, {@code *.yml}, {@code *.json}, recursively,
 * in path order) into a {@link ClusterSnapshot}: v1 Service, discovery.k8s.io/v1 EndpointSlice, v1 Node and
 * networking.k8s.io/v1 ServiceCIDR, in multi-document YAML or {@code kind: List}. Everything else is ignored.
 *
 * <p>One bad file, document or object never hides the rest: a JSON file that does not parse is skipped whole, a YAML
 * document that does not parse is skipped alone (the file's other documents load), an object with a wrongly typed
 * field is skipped alone. A daemon that read the file before keeps that read's objects while any of its documents
 * does not parse ({@link FileLoad#unusable}), so a half-written file never drops the objects of its tail.
 * Both come back as {@link LoadProblem}s. Messages never quote field values: the same directory may hold Secrets.
 */
public final class ManifestLoader {
    private static final Logger LOG = LoggerFactory.getLogger(ManifestLoader.class);

    /** Larger files are refused unread; a proxy's manifest set is kilobytes, and this bounds memory. */
    public static final long MAX_FILE_BYTES = 16L << 20;

    /**
     * The YAML reader's window grows by one buffer at a time while a scalar is scanned, copying what it holds each
     * time: a scalar of n characters costs n²/(2·buffer) copies. With the default 1 KiB buffer a 15 MB quoted
     * string took minutes (issue 10); with 1 MiB the largest file allowed costs some 10⁸ copies, well under a
     * second. The code point limit is the file limit, so that one cap, not the parser's 3 MiB default, decides.
     *
     * <p>But the reader allocates its whole buffer for every file it parses: 2 MB of chars for a 500-byte manifest
     * was 94 % of everything the daemon allocated while 5,000 files were read (issue 11's GC burst,
     * docs/benchmarks.md). So each file gets the smallest of these buffers that holds it whole (a UTF-8 file never
     * decodes to more chars than it has bytes); a file that fits never grows the window, whatever the buffer.
     */
    static final int[] YAML_BUFFER_SIZES = {4 << 10, 64 << 10, 1 << 20};

    /** The YAML buffer for a file of {@code bytes}: the smallest that holds it, else the largest. */
    static int yamlBufferSize(long bytes) {
        for (int size : YAML_BUFFER_SIZES) if (bytes <= size) return size;
        return YAML_BUFFER_SIZES[YAML_BUFFER_SIZES.length - 1];
    }

    /** One mapper per buffer size, built when a file first needs it. */
    private final ObjectMapper[] yaml = new ObjectMapper[YAML_BUFFER_SIZES.length];
    private final ObjectMapper json;

    public ManifestLoader() {
        // Duplicate keys are refused, as the API server's strict decoding does: which one wins would be a guess.
        this.json = JsonMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
    }

    private synchronized ObjectMapper yaml(long bytes) {
        int size = yamlBufferSize(bytes);
        int i = Arrays.binarySearch(YAML_BUFFER_SIZES, size);
        if (yaml[i] == null) {
            LoadSettings settings = LoadSettings.builder().setBufferSize(size).setCodePointLimit((int) MAX_FILE_BYTES).build();
            yaml[i] = YAMLMapper.builder(YAMLFactory.builder().loadSettings(settings).build())
                    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
        }
        return yaml[i];
    }

    /**
     * Loads every manifest file under {@code dir}.
     *
     * @throws NoSuchFileException   when {@code dir} does not exist
     * @throws NotDirectoryException when it is not a directory
     * @throws IOException           when it cannot be listed (permissions); a single unreadable file is a LoadProblem
     */
    public LoadResult load(Path dir) throws IOException {
        List<LoadProblem> listing = new ArrayList<>();
        return merge(files(dir, listing).stream().map(this::loadFile).toList(), listing);
    }

    /**
     * What one file held.
     *
     * @param unusable true when the file as a whole could not be used (unreadable, too large, malformed): none of
     *                 its objects loaded, or, for a YAML file some of whose documents do not parse, only the others
     */
    public record FileLoad(Path file, List<Object> objects, List<LoadProblem> problems, List<LoadProblem> ignored,
                           boolean unusable) {
        public FileLoad {
            objects = List.copyOf(objects);
            problems = List.copyOf(problems);
            ignored = List.copyOf(ignored);
        }

        /** A file none of whose objects loaded, for the one reason given. */
        static FileLoad unusable(Path file, int document, String message) {
            return new FileLoad(file, List.of(), List.of(LoadProblem.ofFile(file, document, message)), List.of(), true);
        }

        /** The same objects under a note that they are kept from an earlier read, for a file now unusable. */
        public FileLoad keptDespite(FileLoad now) {
            List<LoadProblem> p = new ArrayList<>(now.problems());
            p.add(LoadProblem.ofFile(file, -1, "keeping its " + objects.size()
                    + " objects of the last good read until it parses again"));
            return new FileLoad(file, objects, p, ignored, false);
        }
    }

    /** The directory's objects from its files' loads, in the given (path) order; a later duplicate is a problem. */
    public LoadResult merge(List<FileLoad> files, List<LoadProblem> listingProblems) {
        Sink sink = new Sink();
        sink.problems.addAll(listingProblems);
        // Where each object was first found, by name(): the API server holds one object per name, and which copy
        // wins must not depend on who reads the directory (render or the daemon).
        Map<String, Path> firstSeen = new HashMap<>();
        for (FileLoad f : files) {
            sink.problems.addAll(f.problems());
            sink.ignored.addAll(f.ignored());
            for (Object o : f.objects()) {
                Path first = firstSeen.putIfAbsent(name(o), f.file());
                if (first == null) {
                    sink.objects.add(o);
                } else {
                    sink.problems.add(LoadProblem.duplicate(f.file(), kind(o), meta(o).key(), first));
                }
            }
        }
        ClusterSnapshot snapshot = new ClusterSnapshot(only(sink.objects, ServiceObject.class),
                only(sink.objects, EndpointSliceObject.class), only(sink.objects, NodeObject.class),
                only(sink.objects, ServiceCidrObject.class));
        LOG.debug("loaded files={} services={} endpointSlices={} nodes={} serviceCIDRs={} problems={} ignored={}",
                files.size(), snapshot.services().size(), snapshot.endpointSlices().size(), snapshot.nodes().size(),
                snapshot.serviceCidrs().size(), sink.problems.size(), sink.ignored.size());
        return new LoadResult(snapshot, sink.problems, sink.ignored);
    }

    private static <T> List<T> only(List<Object> objects, Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    /** {@code Kind namespace/name}: what the API server holds one of. */
    static String name(Object o) { return kind(o) + " " + meta(o).key(); }

    static String kind(Object o) {
        if (o instanceof ServiceObject) return "Service";
        if (o instanceof EndpointSliceObject) return "EndpointSlice";
        if (o instanceof NodeObject) return "Node";
        if (o instanceof ServiceCidrObject) return "ServiceCIDR";
        throw new IllegalArgumentException("not a cluster object: " + o.getClass());
    }

    static ObjectMeta meta(Object o) {
        if (o instanceof ServiceObject x) return x.meta();
        if (o instanceof EndpointSliceObject x) return x.meta();
        if (o instanceof NodeObject x) return x.meta();
        if (o instanceof ServiceCidrObject x) return x.meta();
        throw new IllegalArgumentException("not a cluster object: " + o.getClass());
    }

    /**
     * The manifest files under {@code dir}, sorted by path. Entries whose name starts with a dot are skipped, and
     * directory symlinks are not followed: a ConfigMap volume holds each file twice, as {@code name -> ..data/name}
     * and inside the hidden {@code ..2024_...} directory, and must load once. A subdirectory that cannot be listed
     * is a problem of its own, added to {@code problems}; the rest is still read.
     *
     * @throws NoSuchFileException   when {@code dir} does not exist
     * @throws NotDirectoryException when it is not a directory
     */
    public List<Path> files(Path dir, List<LoadProblem> problems) throws IOException {
        if (!Files.exists(dir)) throw new NoSuchFileException(dir.toString(), null, "no such directory");
        if (!Files.isDirectory(dir)) throw new NotDirectoryException(dir.toString());
        List<Path> files = new ArrayList<>();
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) {
                return d.equals(dir) || !hidden(dir.relativize(d)) ? FileVisitResult.CONTINUE : FileVisitResult.SKIP_SUBTREE;
            }

            @Override public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) {
                // attrs describe the link itself for a symlink; Files.isRegularFile follows it to the target.
                if (!hidden(dir.relativize(f)) && isManifestName(f) && Files.isRegularFile(f)) files.add(f);
                return FileVisitResult.CONTINUE;
            }

            @Override public FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
                if (f.equals(dir)) throw e;
                problems.add(LoadProblem.ofFile(f, -1, "unreadable: " + UnreadableFile.reason(f, e)));
                return FileVisitResult.CONTINUE;
            }
        });
        files.sort(null);
        return files;
    }

    private static boolean hidden(Path relative) {
        for (Path part : relative) {
            if (part.toString().startsWith(".")) return true;
        }
        return false;
    }

    private static boolean isManifestName(Path p) {
        String n = p.getFileName().toString().toLowerCase(Locale.ROOT);
        return n.endsWith(".yaml") || n.endsWith(".yml") || n.endsWith(".json");
    }

    /** Loads one file; never throws. */
    public FileLoad loadFile(Path file) {
        byte[] bytes;
        try {
            long size = Files.size(file);
            if (size > MAX_FILE_BYTES) {
                return FileLoad.unusable(file, -1, "file is " + size + " bytes; the limit is " + MAX_FILE_BYTES);
            }
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            return FileLoad.unusable(file, -1, "unreadable: " + UnreadableFile.reason(file, e));
        }
        boolean isJson = file.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".json");
        ObjectMapper mapper = isJson ? json : yaml(bytes.length);
        List<JsonNode> documents = new ArrayList<>();
        try (MappingIterator<JsonNode> it = mapper.readerFor(JsonNode.class).readValues(bytes)) {
            it.readAll(documents);
        } catch (JacksonException e) {
            String text = new String(bytes, StandardCharsets.UTF_8);
            FileLoad byDocument = isJson ? null : loadDocumentByDocument(file, text, mapper);
            return byDocument != null ? byDocument : FileLoad.unusable(file, documents.size(), malformed(SyntaxError.of(e, text, 1)));
        }
        Sink sink = new Sink();
        for (int i = 0; i < documents.size(); i++) {
            JsonNode doc = documents.get(i);
            if (doc == null || doc.isNull() || doc.isMissingNode()) continue;   // an empty document: "---" twice, comments only
            loadObject(file, i, doc, null, null, null, sink);
        }
        return new FileLoad(file, sink.objects, sink.problems, sink.ignored, false);
    }

    /** A line that starts a YAML document ({@code ---} alone or before content); inside no scalar can a line start so. */
    private static final Pattern DOCUMENT_START = Pattern.compile("^---(?:[ \\t].*)?$");

    /**
     * A YAML file in which some document does not parse, read again one document at a time so that only the broken
     * ones are skipped, each reported with its number and the line and column of the problem. The file stays
     * {@link FileLoad#unusable}, so the daemon keeps the objects of its last good read while the file is being
     * written; without one (render, or a daemon's first read) the documents that parse are used. Null when every
     * document parses alone (the whole file's error is then none of theirs, a directive say: the file is skipped).
     */
    private FileLoad loadDocumentByDocument(Path file, String text, ObjectMapper mapper) {
        Sink sink = new Sink();
        List<String> lines = text.lines().toList();
        int document = 0;
        int broken = 0;
        int start = 0;
        for (int i = 0; i <= lines.size(); i++) {
            if (start >= lines.size()) break;
            if (i < lines.size() && (i == start || !DOCUMENT_START.matcher(lines.get(i)).matches())) continue;
            // lines [start, i) are one document: its "---" line (if any) and what follows up to the next one
            String part = String.join("\n", lines.subList(start, i)) + "\n";
            List<JsonNode> nodes = new ArrayList<>();
            try (MappingIterator<JsonNode> it = mapper.readerFor(JsonNode.class).readValues(part)) {
                it.readAll(nodes);
            } catch (JacksonException e) {
                sink.problems.add(LoadProblem.ofFile(file, document, malformed(SyntaxError.of(e, part, start + 1))));
                broken++;
                nodes = null;
            }
            // Text before the first "---" that holds nothing (comments) is no document, as in the whole file's read.
            boolean isDocument = nodes == null || !nodes.isEmpty() || DOCUMENT_START.matcher(lines.get(start)).matches();
            if (nodes != null) {
                for (JsonNode doc : nodes) {
                    if (doc != null && !doc.isNull() && !doc.isMissingNode()) loadObject(file, document, doc, null, null, null, sink);
                }
            }
            if (isDocument) document++;
            start = i;
        }
        return broken == 0 ? null : new FileLoad(file, sink.objects, sink.problems, sink.ignored, true);
    }

    /**
     * Loads one top-level object or List item. {@code itemOf} is the List's label ({@code items[3]}) for an item;
     * {@code defaultKind}/{@code defaultApiVersion} come from a typed list ({@code ServiceList}), whose items the API
     * sends without their own kind.
     */
    private void loadObject(Path file, int doc, JsonNode raw, String itemOf, String defaultKind, String defaultApiVersion,
                            Sink sink) {
        if (!raw.isObject()) {
            sink.problems.add(new LoadProblem(file, doc, null, itemOf, null,
                    "expected a Kubernetes object (a map), found " + ApiNode.typeName(raw)));
            return;
        }
        ApiNode obj = new ApiNode(raw, "");
        String kind;
        String apiVersion;
        try {
            kind = obj.str("kind");
            apiVersion = obj.str("apiVersion");
        } catch (ManifestFormatException e) {
            sink.problems.add(new LoadProblem(file, doc, null, itemOf, e.field(), e.getMessage()));
            return;
        }
        if (kind == null) kind = defaultKind;
        if (apiVersion == null) apiVersion = defaultApiVersion;
        if (kind == null || kind.isEmpty()) {
            sink.problems.add(new LoadProblem(file, doc, null, itemOf, "kind", "missing"));
            return;
        }
        if (itemOf == null && kind.endsWith("List") && raw.has("items")) {
            loadList(file, doc, obj, kind, apiVersion, sink);
            return;
        }
        String label = label(raw, itemOf);
        try {
            switch (kind + " " + apiVersion) {
                case "Service v1" -> sink.objects.add(ApiObjectDecoder.service(obj));
                case "EndpointSlice discovery.k8s.io/v1" -> sink.objects.add(ApiObjectDecoder.endpointSlice(obj));
                case "Node v1" -> sink.objects.add(ApiObjectDecoder.node(obj));
                case "ServiceCIDR networking.k8s.io/v1" -> sink.objects.add(ApiObjectDecoder.serviceCidr(obj));
                default -> sink.ignored.add(new LoadProblem(file, doc, kind, label, null,
                        "not read by the proxy (apiVersion " + apiVersion + ")"));
            }
        } catch (ManifestFormatException e) {
            sink.problems.add(new LoadProblem(file, doc, kind, label, e.field(), e.getMessage()));
        }
    }

    private void loadList(Path file, int doc, ApiNode list, String kind, String apiVersion, Sink sink) {
        JsonNode items = list.raw().get("items");
        if (!items.isArray()) {
            sink.problems.add(new LoadProblem(file, doc, kind, null, "items",
                    "expected a list, found " + ApiNode.typeName(items)));
            return;
        }
        // "kind: List" items carry their own kind; a typed list (ServiceList) implies it for each item.
        String itemKind = "List".equals(kind) ? null : kind.substring(0, kind.length() - "List".length());
        String itemApiVersion = "List".equals(kind) ? null : apiVersion;
        int i = 0;
        for (JsonNode item : items.values()) {
            String at = "items[" + i++ + "]";
            if (item == null || item.isNull()) continue;
            loadObject(file, doc, item, at, itemKind, itemApiVersion, sink);
        }
    }

    /** {@code namespace/name} when readable, else the List position, for messages. Never throws. */
    private static String label(JsonNode raw, String itemOf) {
        JsonNode name = raw.path("metadata").path("name");
        JsonNode ns = raw.path("metadata").path("namespace");
        if (!name.isString()) return itemOf;
        return (!ns.isString() || ns.stringValue().isEmpty() ? "" : ns.stringValue() + "/") + name.stringValue();
    }

    /** A parse failure's problem message: where and why, nothing the parser quoted from the file (it may be a Secret). */
    static String malformed(SyntaxError e) {
        String s = e.toString();
        return s.startsWith("a tab character") ? s : (e.line() > 0 ? "malformed " : "malformed: ") + s;
    }

    private static final class Sink {
        final List<Object> objects = new ArrayList<>();
        final List<LoadProblem> problems = new ArrayList<>();
        final List<LoadProblem> ignored = new ArrayList<>();
    }
}
