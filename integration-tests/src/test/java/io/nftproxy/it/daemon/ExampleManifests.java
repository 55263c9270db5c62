package io.nftproxy.it.daemon;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** What the daemon kernel tests set up around a daemon: the repository's example manifests in a directory of their own, free ports. */
final class ExampleManifests {
    private ExampleManifests() {}

    /** Copies the repository's {@code examples/} tree into {@code to}, so a test can change its copy. */
    static void copyTo(Path to) throws IOException {
        Path from = Path.of("..", "examples");
        try (Stream<Path> files = Files.walk(from)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(t);
                else Files.copy(p, t);
            }
        }
    }

    /**
     * Where the default (flat) table layout keeps demo/hello's three endpoints: a data map, not a chain of its own
     * ({@code demo/hello} is a simple service port: Cluster policies, no affinity).
     */
    static final String HELLO_ENDPOINTS_MAP = "flat-endpoints-tcp-3";

    /**
     * demo/hello's slot {@code slot} of {@link #HELLO_ENDPOINTS_MAP}, as {@code nft list map} prints it: with the
     * Service's element comment, which every flat element carries.
     */
    static String helloSlot(int slot, String endpoint) {
        return "10.105.101.118 . 80 . " + slot + " comment \"demo/hello:http\" : " + endpoint + " . 8080";
    }

    /** A TCP port nobody listens on right now, for a daemon's healthz or metrics server. */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
