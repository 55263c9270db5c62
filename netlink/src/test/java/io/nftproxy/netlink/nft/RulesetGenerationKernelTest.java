package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.KernelNamespace;
import io.nftproxy.netlink.KernelTests;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the verification on the long timer relies on: the generation moves by one per changing commit, and only then. */
class RulesetGenerationKernelTest {
    @Test
    void growsByOnePerCommitThatChangesSomethingAndNeverOtherwise() throws Exception {
        KernelTests.assumeAvailable();
        try (KernelNamespace ns = KernelNamespace.create("gen");
             RulesetGeneration gen = RulesetGeneration.openIn(ns.handle())) {
            long g0 = gen.current();
            assertEquals(g0, gen.current(), "a reading changes nothing");
            ns.load("add table ip nftp-a\nadd chain ip nftp-a c\nadd rule ip nftp-a c counter\n");
            long g1 = gen.current();
            assertEquals(g0 + 1, g1, "one batch of three commands is one commit");
            ns.nftOut("list", "ruleset");
            assertEquals(g1, gen.current(), "a listing commits nothing");
            assertFalse(ns.tryLoad("add rule ip nftp-a c counter\nadd rule ip nftp-a missing counter\n").ok(), "the batch is refused");
            assertEquals(g1, gen.current(), "a refused batch is aborted without a new generation");
            ns.load("add table ip6 nftp-other\n");
            assertEquals(g1 + 1, gen.current(), "a commit to any other table moves it too");
            try (KernelNamespace other = KernelNamespace.create("gen")) {
                other.load("add table ip nftp-b\n");
                assertEquals(g1 + 1, gen.current(), "another namespace's commits are not this one's");
            }
        }
    }

    @Test
    void readsTheNamespaceItWasOpenedIn() throws Exception {
        KernelTests.assumeAvailable();
        try (KernelNamespace ns = KernelNamespace.create("gen");
             RulesetGeneration gen = RulesetGeneration.openIn(ns.handle())) {
            long before = gen.current();
            for (int i = 0; i < 5; i++) ns.load("add table ip nftp-t" + i + "\n");
            assertEquals(before + 5, gen.current());
            assertTrue(before >= 0);
        }
    }
}
