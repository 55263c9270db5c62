package io.nftproxy.node;

import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The failures of a call in the node's namespace, as the leftovers and sysctl lines print them. */
class NamespaceCallTest {
    @Test
    void aFailureWithoutMessageIsNamedNotPrintedAsNull() {
        IOException e = assertThrows(IOException.class, () -> OtherModeLeftovers.inNamespace(null, () -> {
            throw new InterruptedException();
        }));
        assertEquals("java.lang.InterruptedException", e.getMessage());
    }

    @Test
    void anIoFailureKeepsItsOwnException() {
        IOException cause = new IOException("open /proc/sys/net/netfilter/nf_conntrack_max: Permission denied");
        assertSame(cause, assertThrows(IOException.class, () -> OtherModeLeftovers.inNamespace(null, () -> {
            throw cause;
        })));
    }

    @Test
    void otherFailuresKeepTheirMessage() {
        IOException e = assertThrows(IOException.class, () -> OtherModeLeftovers.inNamespace(null, () -> Long.parseLong("x")));
        assertEquals("For input string: \"x\"", e.getMessage());
    }
}
