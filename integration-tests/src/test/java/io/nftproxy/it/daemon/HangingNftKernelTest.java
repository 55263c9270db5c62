package io.nftproxy.it.daemon;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 10 row 11: {@code nftproxy run --nft-mode exec} whose {@code nft} never answers (a script first on PATH that
 * sleeps). The health server is up before that first nft call: within seconds the log says what it waits for and
 * since when, and /healthz answers 503 naming the cause.
 */
class HangingNftKernelTest {
    @TempDir Path bin;

    @BeforeAll
    static void kernelAvailable() {
        KernelTests.assumeAvailable();
    }

    @Test
    void aHangingNftIsLoggedWithinSecondsAndHealthzNamesIt() throws Exception {
        Path nft = bin.resolve("nft");
        Files.writeString(nft, "#!/bin/sh\nexec sleep 120\n");
        Files.setPosixFilePermissions(nft, PosixFilePermissions.fromString("rwxr-xr-x"));
        try (KernelNamespace ns = KernelNamespace.create("hang")) {
            ns.exec(Duration.ofSeconds(10), null, "ip", "link", "set", "lo", "up");
            long t0 = System.nanoTime();
            try (DaemonProcess d = DaemonProcess.start(ns, java -> java, Map.of("PATH", bin + ":" + System.getenv("PATH")),
                    "--nft-mode", "exec", "--manifests", "../examples", "--hostname-override", "k8s-node-1",
                    "--healthz-bind-address", "127.0.0.1:10256", "--metrics-bind-address", "127.0.0.1:10249")) {
                assertTrue(d.awaitLog("waiting for nft to answer the capabilities probe since", Duration.ofSeconds(15)), d::log);
                long loggedAfter = (System.nanoTime() - t0) / 1_000_000;
                KernelNamespace.Result r = ns.exec(Duration.ofSeconds(10), null, "curl", "-s", "-w", "\n%{http_code}",
                        "--max-time", "3", "http://127.0.0.1:10256/healthz");
                System.out.printf("hanging nft: logged %d ms after the start; /healthz: %s%n", loggedAfter, r.stdout());
                String[] bodyAndCode = r.stdout().strip().split("\n");
                assertEquals("503", bodyAndCode[bodyAndCode.length - 1], r.stdout() + "\n" + d.log());
                assertTrue(r.stdout().contains("waiting for nft to answer the capabilities probe since"), r.stdout());
                assertTrue(d.alive(), d::log);
                assertEquals("", ns.nftOut("list", "ruleset").strip(), "nothing written");
            }
        }
    }
}
