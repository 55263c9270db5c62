package io.nftproxy.it.release;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The release runtime's module list (release/jlink-modules.txt) covers every JDK module jdeps finds the jar using, so
 * a new dependency that needs one more module fails here instead of on a node with a ClassNotFoundException.
 */
class JlinkModulesTest {
    private static final Path LIST = Path.of("..", "release", "jlink-modules.txt").toAbsolutePath().normalize();
    private static final Path JAR = Path.of("..", "proxy-daemon", "target", "nftproxy.jar").toAbsolutePath().normalize();

    @Test
    void everyModuleJdepsFindsIsInTheRuntime() throws Exception {
        assertTrue(Files.isRegularFile(JAR), "build the jar first: " + JAR);
        Set<String> listed = new TreeSet<>(Files.readAllLines(LIST).stream().map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList());
        String jdeps = Path.of(System.getProperty("java.home"), "bin", "jdeps").toString();
        ReleaseTarball.Run r = ReleaseTarball.run(List.of(jdeps, "--ignore-missing-deps", "--print-module-deps",
                "--multi-release", "17", "-q", JAR.toString()), Map.of(), JAR.getParent(), 300);
        assertEquals(0, r.exit(), r.toString());
        String last = r.stdout().strip().lines().reduce((a, b) -> b).orElse("");
        Set<String> needed = new TreeSet<>(Arrays.asList(last.split(",")));
        assertTrue(needed.contains("java.base"), "jdeps printed no module list: " + r);
        needed.removeAll(listed);
        assertEquals(Set.of(), needed, "modules the jar uses that " + LIST + " leaves out");
    }
}
