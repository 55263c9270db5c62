package io.nftproxy.cli;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;

class LongWaitTest {
    @Test
    void aLongWaitIsReportedOnceAndAShortOneNotAtAll() throws Exception {
        List<String> said = new CopyOnWriteArrayList<>();
        try (LongWait w = LongWait.warnAfter(Duration.ofMillis(50), "slow", said::add)) {
            Thread.sleep(400);
        }
        assertEquals(List.of("slow"), said);
        try (LongWait w = LongWait.warnAfter(Duration.ofMillis(300), "quick", said::add)) {
            Thread.sleep(10);
        }
        Thread.sleep(500);
        assertEquals(List.of("slow"), said, "closed in time: nothing said");
    }
}
