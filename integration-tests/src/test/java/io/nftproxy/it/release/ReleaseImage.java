package io.nftproxy.it.release;

import io.nftproxy.netlink.KernelNamespace;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The release's OCI image archive (release/target/nftproxy-VERSION-linux-ARCH.oci.tar, made by build-image.sh),
 * unpacked as a runtime reads it: index, manifest, config and layer, each found by its digest.
 */
public record ReleaseImage(Path dir, JsonNode index, JsonNode manifest, JsonNode config, Path layer) {
    /** The image's entry point: its runtime's java with the launcher's options and {@code -jar} the jar. */
    public static final List<String> ENTRYPOINT = List.of("/opt/nftproxy/runtime/bin/java", "@/opt/nftproxy/jvm.args");
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String TAR = KernelNamespace.executable("tar").orElse("tar");

    /** The one image archive in release/target; the release's package phase must have made it. */
    public static Path find() throws IOException {
        try (Stream<Path> s = Files.list(ReleaseTarball.TARGET)) {
            List<Path> found = s.filter(p -> p.getFileName().toString().matches("nftproxy-.+-linux-[a-z0-9_]+\\.oci\\.tar"))
                    .toList();
            assertEquals(1, found.size(), "one image archive in " + ReleaseTarball.TARGET
                    + " (./mvnw package -pl release -am, without -Dnftproxy.image.skip): " + found);
            return found.get(0);
        }
    }

    /** Unpacks {@code archive} into {@code into} and follows index.json to the image's one manifest. */
    public static ReleaseImage open(Path archive, Path into) throws Exception {
        ReleaseTarball.Run tar = ReleaseTarball.run(List.of(TAR, "-xf", archive.toString(), "-C", into.toString()),
                Map.of(), into, 120);
        assertEquals(0, tar.exit(), tar.toString());
        JsonNode index = JSON.readTree(Files.readString(into.resolve("index.json")));
        assertEquals(1, index.path("manifests").size(), "one image: " + index);
        JsonNode manifest = JSON.readTree(Files.readString(blob(into, index.path("manifests").get(0))));
        JsonNode config = JSON.readTree(Files.readString(blob(into, manifest.path("config"))));
        assertEquals(1, manifest.path("layers").size(), "one layer: " + manifest);
        return new ReleaseImage(into, index, manifest, config, blob(into, manifest.path("layers").get(0)));
    }

    /** The blob a descriptor points to, checked against the descriptor's digest and size. */
    static Path blob(Path dir, JsonNode descriptor) throws Exception {
        String digest = descriptor.path("digest").asString();
        if (!digest.startsWith("sha256:")) fail("not a sha256 digest: " + descriptor);
        Path p = dir.resolve("blobs/sha256").resolve(digest.substring("sha256:".length()));
        if (!Files.isRegularFile(p)) fail("no blob for " + descriptor);
        assertEquals(descriptor.path("size").asLong(), Files.size(p), "size of " + p);
        try (InputStream in = Files.newInputStream(p)) {
            assertEquals(digest, sha256(in), "digest of " + p);
        }
        return p;
    }

    /** The layer's uncompressed digest: what the config's rootfs.diff_ids names. */
    String layerDiffId() throws Exception {
        try (InputStream in = new GZIPInputStream(Files.newInputStream(layer), 1 << 16)) {
            return sha256(in);
        }
    }

    /** The layer unpacked into {@code root}: the container's file system. */
    public Path unpackLayer(Path root) throws Exception {
        Files.createDirectories(root);
        ReleaseTarball.Run tar = ReleaseTarball.run(List.of(TAR, "-xzf", layer.toString(), "-C", root.toString()),
                Map.of(), root, 120);
        assertEquals(0, tar.exit(), tar.toString());
        return root;
    }

    /** The layer's listing with owners as numbers ({@code tar -tvz --numeric-owner}). */
    String layerListing() throws Exception {
        ReleaseTarball.Run tar = ReleaseTarball.run(List.of(TAR, "-tvzf", layer.toString(), "--numeric-owner"),
                Map.of(), dir, 120);
        assertEquals(0, tar.exit(), tar.toString());
        return tar.stdout();
    }

    static String sha256(InputStream in) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        byte[] buf = new byte[1 << 16];
        for (int n; (n = in.read(buf)) > 0; ) md.update(buf, 0, n);
        return "sha256:" + HexFormat.of().formatHex(md.digest());
    }
}
