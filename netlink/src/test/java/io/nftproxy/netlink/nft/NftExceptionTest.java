package io.nftproxy.netlink.nft;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NftExceptionTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "Error: Could not process rule: No such file or directory|NOT_FOUND",
            "Error: No such file or directory; did you mean chain ‘c’ in table ip ‘t’?|NOT_FOUND",
            "Error: Could not process rule: File exists|EXISTS",
            "Error: Could not process rule: Operation not permitted|PERMISSION",
            "Error: Could not process rule: Operation not supported|UNSUPPORTED",
            "Error: Could not process rule: Device or resource busy|FAILED",
            "Error: syntax error, unexpected newline|INVALID",
            "Error: invalid priority expression value in this context.|INVALID",
            "netlink: Error: cache initialization failed: Operation not permitted|PERMISSION",
            "exit status 1|FAILED",
    })
    void classifiesNftErrorText(String text, NftException.Kind kind) {
        assertEquals(kind, NftException.fromErrorText("ctx", text + "\nadd rule ip t c x\n   ^\n").kind());
    }

    @Test
    void keepsTheLocatedLineAndItsNumber() {
        String stderr = "/dev/stdin:3:22-28: Error: Could not process rule: No such file or directory\n"
                + "add rule ip kube-proxy services jump nochain\n"
                + "                     ^^^^^^^\n";
        NftException e = NftException.fromErrorText("apply 3 commands to ip kube-proxy", stderr);
        assertEquals(NftException.Kind.NOT_FOUND, e.kind());
        assertEquals(3, e.lineNumber());
        assertEquals("add rule ip kube-proxy services jump nochain", e.failingLine());
        assertEquals("apply 3 commands to ip kube-proxy: Could not process rule: No such file or directory"
                + " (line 3: add rule ip kube-proxy services jump nochain)", e.getMessage());
        assertEquals(stderr.strip(), e.errorText());
    }

    @Test
    void anEmptyErrorIsAFailureWithoutALine() {
        NftException e = NftException.fromErrorText("list tables", "");
        assertEquals(NftException.Kind.FAILED, e.kind());
        assertNull(e.failingLine());
        assertTrue(e.getMessage().startsWith("list tables: "), e.getMessage());
    }
}
