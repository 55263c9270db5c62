package io.nftproxy.netlink.nft;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NftLibraryTest {
    private static boolean libraryInstalled() {
        for (String dir : new String[] {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu"}) {
            if (Files.exists(Path.of(dir, NftLibrary.SONAME))) return true;
        }
        return false;
    }

    @Test
    void availabilityMatchesTheInstalledLibraryAndNeverThrows() {
        if (libraryInstalled()) {
            assertTrue(NftLibrary.isAvailable(), () -> "cause: " + NftLibrary.unavailabilityCause());
            assertNull(NftLibrary.unavailabilityCause());
            assertNotNull(NftLibrary.get());
        } else {
            System.out.println("libnftables.so.1 not installed; checking the unavailable path");
            assertNotNull(NftLibrary.unavailabilityCause());
            NftException e = assertThrows(NftException.class, NftLibrary::get);
            assertEquals(NftException.Kind.UNSUPPORTED, e.kind());
        }
    }

    @Test
    void aContextRefusesOtherThreads() throws Exception {
        if (!NftLibrary.isAvailable()) return;
        try (NftContext ctx = NftContext.open()) {
            Throwable[] seen = new Throwable[1];
            Thread t = new Thread(() -> {
                try {
                    ctx.check("add table ip x");
                } catch (Throwable e) {
                    seen[0] = e;
                }
            });
            t.start();
            t.join(10_000);
            assertTrue(seen[0] instanceof IllegalStateException, String.valueOf(seen[0]));
        }
    }

    @Test
    void modesParse() {
        assertEquals(NftClients.Mode.AUTO, NftClients.Mode.parse("auto"));
        assertEquals(NftClients.Mode.LIBRARY, NftClients.Mode.parse("Library"));
        assertEquals(NftClients.Mode.EXEC, NftClients.Mode.parse(" exec "));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NftClients.Mode.parse("kernel"));
        assertTrue(e.getMessage().contains("library, exec, auto"), e.getMessage());
    }

    @Test
    void autoPrefersTheLibraryAndSaysWhy() throws Exception {
        NftClients.Selection s = NftClients.createInNamespace(NftClients.Mode.parse("auto"), io.nftproxy.netlink.NetworkNamespace.host());
        try (NftClient c = s.client()) {
            if (NftLibrary.isAvailable()) {
                assertTrue(c instanceof LibNftablesClient, c.describe());
                assertTrue(s.reason().contains("in-process"), s.reason());
            } else {
                assertTrue(c instanceof ExecNftClient, c.describe());
                assertTrue(s.reason().contains("unavailable"), s.reason());
            }
        }
        try (NftClient c = NftClients.createInNamespace(NftClients.Mode.parse("exec"), io.nftproxy.netlink.NetworkNamespace.host()).client()) {
            assertTrue(c instanceof ExecNftClient);
        }
    }

    @Test
    void autoInANamespaceBindsTheClientThere() throws Exception {
        io.nftproxy.netlink.KernelTests.assumeAvailable();
        try (io.nftproxy.netlink.KernelNamespace ns = io.nftproxy.netlink.KernelNamespace.create("nl")) {
            NftClients.Selection s = NftClients.createInNamespace(NftClients.Mode.AUTO, ns.handle());
            try (NftClient c = s.client()) {
                assertTrue(s.reason().contains(ns.name()), s.reason());
                assertNull(c.listTableJson(io.nftproxy.net.IpFamily.IPV4));
            }
        }
    }
}
