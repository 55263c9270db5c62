package io.nftproxy.cli;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The daemon's own jar: its subcommands, and no demo (that comes from the demo module's jar, when present). */
class DaemonSubcommandsTest {
    @Test
    void withoutTheDemoJarTheCommandLineHasTheDaemonsSubcommandsOnly() {
        assertEquals(List.of("render", "trace", "run", "cleanup", "conntrack", "help"),
                List.copyOf(NftproxyCommand.newCommandLine().getSubcommands().keySet()));
        assertThrows(ClassNotFoundException.class, () -> Class.forName("io.nftproxy.demo.Demo"));
    }
}
