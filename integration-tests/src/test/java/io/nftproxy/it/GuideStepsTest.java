package io.nftproxy.it;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How MigrationKernelTest reads the guide's marked blocks: what it runs is what the reader sees. */
class GuideStepsTest {
    @Test
    void markedShBlocksGiveOneCommandPerLineWithContinuationsJoined() {
        String md = """
                1. **Step.** Text.

                   <!-- migration-test: systemd -->
                   ```sh
                   nftproxy run --config /etc/nftproxy/config.yaml --dry-run   # check
                   kubectl patch daemonset kube-proxy -p \\
                     '{"a": "# not a comment"}'
                   ```

                   ```sh
                   not marked
                   ```
                <!-- migration-test: back -->
                ```sh
                nftproxy cleanup
                ```
                """;
        assertEquals(List.of("nftproxy run --config /etc/nftproxy/config.yaml --dry-run   # check",
                "kubectl patch daemonset kube-proxy -p  '{\"a\": \"# not a comment\"}'"), GuideSteps.marked(md, "systemd"));
        assertEquals(List.of("nftproxy cleanup"), GuideSteps.marked(md, "back"));
        assertEquals(List.of(), GuideSteps.marked(md, "other"));
    }

    @Test
    void wordsAndCommentsAsShSplitsThem() {
        assertEquals(List.of("run", "--config", "/etc/x.yaml", "--dry-run"),
                GuideSteps.words("run --config /etc/x.yaml --dry-run  # the check"));
        assertEquals(List.of("kubectl", "-p", "{\"a\": \"# b\"}"), GuideSteps.words("kubectl -p '{\"a\": \"# b\"}'"));
        assertEquals("iptables-nft-save -t nat | grep -c KUBE-SVC", GuideSteps.withoutComment("iptables-nft-save -t nat | grep -c KUBE-SVC  # 0: gone"));
        assertEquals("curl http://x/#frag", GuideSteps.withoutComment("curl http://x/#frag"));
    }

    @Test
    void aMarkerNotRightBeforeAFenceIsAnError() {
        AssertionError e = assertThrows(AssertionError.class,
                () -> GuideSteps.marked("<!-- migration-test: systemd -->\n\n```sh\nls\n```\n", "systemd"));
        assertTrue(e.getMessage().contains("must stand right before a ```sh fence"), e.getMessage());
        AssertionError open = assertThrows(AssertionError.class,
                () -> GuideSteps.marked("<!-- migration-test: systemd -->\n```sh\nls\n", "systemd"));
        assertTrue(open.getMessage().contains("is not closed"), open.getMessage());
    }
}
