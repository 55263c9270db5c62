package io.nftproxy.node;

import io.nftproxy.config.ConntrackSettings;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** kube-proxy's arithmetic: the limit from maxPerCore and min, what 0 means, and the kernel's CPU list. */
class ConntrackSysctlsTest {
    @Test
    void theLimitIsPerCoreTimesCpusButAtLeastMin() {
        assertEquals(131072, ConntrackSysctls.max(ConntrackSettings.DEFAULT, 2));
        assertEquals(32768L * 8, ConntrackSysctls.max(ConntrackSettings.DEFAULT, 8));
        assertEquals(0, ConntrackSysctls.max(ConntrackSettings.DEFAULT.withMaxPerCore(0), 64), "0 per core leaves the limit alone");
        assertEquals(10, ConntrackSysctls.max(ConntrackSettings.DEFAULT.withMaxPerCore(5).withMin(0), 2));
    }

    /**
     * kube-proxy 1.36 caps the product at 1,048,576 before it compares it with min: 64 CPUs at the default 32768
     * would be 2,097,152. Exactly 32 CPUs reaches the cap without passing it.
     */
    @Test
    void theProductIsCappedAtOneMebiEntriesAsKubeProxy136Does() {
        assertEquals(1_048_576, ConntrackSysctls.max(ConntrackSettings.DEFAULT, 64));
        assertEquals(1_048_576, ConntrackSysctls.max(ConntrackSettings.DEFAULT, 512));
        assertEquals(32768L * 32, ConntrackSysctls.max(ConntrackSettings.DEFAULT, 32));
        assertEquals(1_048_575, ConntrackSysctls.max(ConntrackSettings.DEFAULT.withMaxPerCore(1_048_575).withMin(0), 1));
        // The cap comes first: a larger min does not lift a capped product...
        assertEquals(1_048_576, ConntrackSysctls.max(ConntrackSettings.DEFAULT.withMin(4_000_000), 64));
        // ...but a min above both still wins over a product below it.
        assertEquals(4_000_000, ConntrackSysctls.max(ConntrackSettings.DEFAULT.withMin(4_000_000), 8));
        assertEquals(List.of(new ConntrackSysctls.Setting("nf_conntrack_max", 1_048_576),
                new ConntrackSysctls.Setting("nf_conntrack_tcp_timeout_established", 86400),
                new ConntrackSysctls.Setting("nf_conntrack_tcp_timeout_close_wait", 3600)), ConntrackSysctls.plan(ConntrackSettings.DEFAULT, 64));
    }

    @Test
    void zeroDurationsAndFalseAreNotInThePlan() {
        ConntrackSettings none = new ConntrackSettings(0, 131072, Duration.ZERO, Duration.ZERO, false, Duration.ZERO, Duration.ZERO);
        assertEquals(List.of(), ConntrackSysctls.plan(none, 4));
        assertEquals(List.of(new ConntrackSysctls.Setting("nf_conntrack_max", 131072),
                new ConntrackSysctls.Setting("nf_conntrack_tcp_timeout_established", 86400),
                new ConntrackSysctls.Setting("nf_conntrack_tcp_timeout_close_wait", 3600)), ConntrackSysctls.plan(ConntrackSettings.DEFAULT, 1));
    }

    @Test
    void countsTheKernelsCpuList() {
        assertEquals(1, ConntrackSysctls.countCpus("0"));
        assertEquals(2, ConntrackSysctls.countCpus("0-1"));
        assertEquals(7, ConntrackSysctls.countCpus("0-3,8,10-11"));
    }

    /** The hash size file is root-only (and a container's /sys may lack it): unreadable, it is a warning, not a failed start. */
    @Test
    void anUnreadableHashSizeIsAWarningNotAFailure() throws java.io.IOException {
        java.util.Map<String, Long> values = new java.util.HashMap<>(java.util.Map.of("nf_conntrack_max", 131072L));
        ConntrackSysctls.Access access = new ConntrackSysctls.Access() {
            @Override public long read(String name) throws java.io.IOException {
                if (name.equals("hashsize")) throw new java.nio.file.AccessDeniedException("/sys/module/nf_conntrack/parameters/hashsize");
                return values.get(name);
            }

            @Override public void write(String name, long value) { values.put(name, value); }

            @Override public boolean writable(String name) { return true; }
        };
        java.util.List<ConntrackSysctls.Outcome> out = ConntrackSysctls.apply(
                java.util.List.of(new ConntrackSysctls.Setting("nf_conntrack_max", 131072)), access);
        org.junit.jupiter.api.Assertions.assertEquals(2, out.size(), out.toString());
        org.junit.jupiter.api.Assertions.assertEquals(ConntrackSysctls.Status.UNCHANGED, out.get(0).status());
        org.junit.jupiter.api.Assertions.assertEquals(ConntrackSysctls.Status.HASHSIZE_NOT_SET, out.get(1).status());
        org.junit.jupiter.api.Assertions.assertTrue(out.get(1).toString().contains("cannot read /sys/module/nf_conntrack/parameters/hashsize"), out.get(1).toString());
    }
}
