package io.nftproxy.systemd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SdNotifyTest {
    private static final Duration WAIT = Duration.ofSeconds(2);
    private static final Duration QUIET = Duration.ofMillis(200);

    @TempDir
    Path dir;

    @Test
    void pathSocketReceivesExactlyTheMessagesSent() throws IOException {
        try (NotifyReceiver receiver = NotifyReceiver.atPath(dir)) {
            assertProtocol(receiver);
        }
    }

    @Test
    void abstractSocketReceivesExactlyTheMessagesSent() throws IOException {
        try (NotifyReceiver receiver = NotifyReceiver.abstractName()) {
            assertTrue(receiver.notifySocket().startsWith("@"));
            assertProtocol(receiver);
        }
    }

    private static void assertProtocol(NotifyReceiver receiver) throws IOException {
        SdNotify notify = new SdNotify(Map.of("NOTIFY_SOCKET", receiver.notifySocket()), 4242);
        assertTrue(notify.isEnabled());

        assertTrue(notify.ready("synced 3 services"));
        assertEquals(Optional.of("READY=1\nSTATUS=synced 3 services"), receiver.receive(WAIT));
        assertTrue(notify.status("syncing"));
        assertEquals(Optional.of("STATUS=syncing"), receiver.receive(WAIT));
        assertTrue(notify.watchdog());
        assertEquals(Optional.of("WATCHDOG=1"), receiver.receive(WAIT));
        assertTrue(notify.stopping());
        assertEquals(Optional.of("STOPPING=1"), receiver.receive(WAIT));
        assertTrue(notify.mainPid());
        assertEquals(Optional.of("MAINPID=4242"), receiver.receive(WAIT));

        long before = System.nanoTime() / 1_000;
        assertTrue(notify.reloading());
        String reloading = receiver.receive(WAIT).orElseThrow();
        long after = System.nanoTime() / 1_000;
        String[] lines = reloading.split("\n");
        assertEquals(2, lines.length, reloading);
        assertEquals("RELOADING=1", lines[0]);
        assertTrue(lines[1].startsWith("MONOTONIC_USEC="), reloading);
        long usec = Long.parseLong(lines[1].substring("MONOTONIC_USEC=".length()));
        assertTrue(usec >= before && usec <= after, usec + " not in [" + before + ", " + after + "]");

        assertEquals(List.of(), receiver.receiveFor(QUIET), "nothing beyond what was sent");
    }

    @Test
    void statusTextCannotInjectAssignments() throws IOException {
        try (NotifyReceiver receiver = NotifyReceiver.atPath(dir)) {
            SdNotify notify = new SdNotify(Map.of("NOTIFY_SOCKET", receiver.notifySocket()));
            assertTrue(notify.status("service default/evil\nREADY=1\nMAINPID=1"));
            assertEquals(Optional.of("STATUS=service default/evil READY=1 MAINPID=1"), receiver.receive(WAIT));
            assertTrue(notify.ready(null));
            assertEquals(Optional.of("READY=1\nSTATUS="), receiver.receive(WAIT));
        }
    }

    @Test
    void unsetSocketIsASilentNoOp() {
        for (Map<String, String> env : List.of(Map.<String, String>of(), Map.of("NOTIFY_SOCKET", ""))) {
            SdNotify notify = new SdNotify(env);
            assertFalse(notify.isEnabled());
            assertFalse(notify.ready("up"));
            assertFalse(notify.status("x"));
            assertFalse(notify.watchdog());
            assertFalse(notify.stopping());
            assertFalse(notify.reloading());
            assertFalse(notify.mainPid());
            assertEquals("SdNotify[disabled]", notify.toString());
        }
    }

    @Test
    void unsupportedSocketNamesDisableNotification() {
        for (String name : List.of("relative/notify.sock", "vsock:2:1234", "/run/n\u00f6tify")) {
            SdNotify notify = new SdNotify(Map.of("NOTIFY_SOCKET", name));
            assertFalse(notify.isEnabled(), name);
            assertFalse(notify.ready("up"), name);
        }
    }

    @Test
    void sendToAMissingSocketFailsQuietlyEveryTime() {
        SdNotify notify = new SdNotify(Map.of("NOTIFY_SOCKET", dir.resolve("nobody-listens.sock").toString()));
        assertTrue(notify.isEnabled());
        for (int i = 0; i < 3; i++) {
            assertFalse(notify.watchdog(), "send " + i + " must report failure, not throw");
        }
    }

    @Test
    void senderPicksUpASocketThatAppearsLater() throws IOException {
        SdNotify notify = new SdNotify(Map.of("NOTIFY_SOCKET", dir.resolve("notify.sock").toString()));
        assertFalse(notify.status("before"));
        try (NotifyReceiver receiver = NotifyReceiver.atPath(dir)) {
            assertTrue(notify.status("after"));
            assertEquals(Optional.of("STATUS=after"), receiver.receive(WAIT));
        }
    }

    @Test
    void watchdogIntervalFollowsSdWatchdogEnabled() {
        assertEquals(Optional.of(Duration.ofSeconds(30)),
                new SdNotify(Map.of("WATCHDOG_USEC", "30000000"), 7).watchdogInterval());
        assertEquals(Optional.of(Duration.ofMillis(200)),
                new SdNotify(Map.of("WATCHDOG_USEC", "200000", "WATCHDOG_PID", "7"), 7).watchdogInterval());
        assertEquals(Optional.empty(),
                new SdNotify(Map.of("WATCHDOG_USEC", "200000", "WATCHDOG_PID", "8"), 7).watchdogInterval(),
                "another process's watchdog");
        assertEquals(Optional.empty(), new SdNotify(Map.of(), 7).watchdogInterval());
        for (String bad : List.of("0", "-5", "soon", "")) {
            assertEquals(Optional.empty(), new SdNotify(Map.of("WATCHDOG_USEC", bad), 7).watchdogInterval(), bad);
        }
        assertEquals(Optional.empty(),
                new SdNotify(Map.of("WATCHDOG_USEC", "200000", "WATCHDOG_PID", "x"), 7).watchdogInterval());
    }

    @Test
    void fromEnvironmentUsesThisProcess() {
        SdNotify notify = SdNotify.fromEnvironment();
        assertEquals(ProcessHandle.current().pid(), notify.pid());
        assertEquals(System.getenv().containsKey("NOTIFY_SOCKET")
                && !System.getenv("NOTIFY_SOCKET").isEmpty(), notify.isEnabled());
    }
}
