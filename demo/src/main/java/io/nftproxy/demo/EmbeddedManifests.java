package io.nftproxy.demo;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The example manifests of the checkout's {@code examples/}, copied into the jar at build time (see the
 * proxy-daemon POM): the embedded manifest source. The demo extracts them to a directory of its own, so it runs
 * from any working directory and may edit its copy freely.
 */
public final class EmbeddedManifests {
    /** A file every build embeds; its grandparent is the root of the examples. */
    private static final String ANCHOR = "examples/cluster/k8s-node-1.yaml";

    private EmbeddedManifests() {}

    /**
     * Copies every embedded manifest into {@code target} (which must exist), keeping the directory layout; returns
     * the files written, relative to {@code target}, in path order.
     *
     * @throws IOException the jar holds no examples (a build that skipped the resources phase), or a copy failed
     */
    public static List<Path> extractTo(Path target) throws IOException {
        URL anchor = EmbeddedManifests.class.getResource(ANCHOR);
        if (anchor == null) throw new IOException("this build of nftproxy holds no example manifests (" + ANCHOR + " is missing)");
        URI uri;
        try {
            uri = anchor.toURI();
        } catch (URISyntaxException e) {
            throw new IOException("unusable resource location " + anchor, e);
        }
        if (!uri.getScheme().equals("jar")) return copyTree(Path.of(uri).getParent().getParent(), target);
        // A new file system over the jar; the shaded jar is opened by nobody else, so closing it here is safe.
        try (FileSystem jar = FileSystems.newFileSystem(uri, Map.of())) {
            return copyTree(jar.provider().getPath(uri).getParent().getParent(), target);
        } catch (FileSystemAlreadyExistsException e) {
            throw new IOException("the jar's file system is already open elsewhere: " + uri, e);
        }
    }

    private static List<Path> copyTree(Path root, Path target) throws IOException {
        List<Path> written = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path src : (Iterable<Path>) files.filter(Files::isRegularFile).sorted()::iterator) {
                // Path.of on the relative text: the source may live in the jar's file system, the target does not.
                Path rel = Path.of(root.relativize(src).toString());
                Path dst = target.resolve(rel);
                Files.createDirectories(dst.getParent());
                Files.copy(src, dst);
                written.add(rel);
            }
        }
        return written;
    }
}
