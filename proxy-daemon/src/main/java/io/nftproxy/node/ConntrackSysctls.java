package io.nftproxy.node;

import io.nftproxy.config.ConntrackSettings;
import io.nftproxy.netlink.NetworkNamespace;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;

/**
 * The conntrack sysctls kube-proxy sets at start, set the same way: each only when its setting is not 0 (tcpBeLiberal:
 * only when true), and each written only when the kernel's value differs, so a second start with fewer privileges
 * (after {@code --init-only}) finds nothing to write. nf_conntrack_max is max(maxPerCore x CPUs, min), the product
 * capped at {@link #SCALED_MAX_CAP} first as kube-proxy 1.36 caps it, and the conntrack hash table is grown to a
 * quarter of it when smaller.
 *
 * <p>The timeouts and be_liberal belong to the network namespace; nf_conntrack_max and the hash size belong to the
 * whole host, and the kernel makes nf_conntrack_max read-only outside the host's initial namespace. There it is
 * reported as not settable here and left alone (kube-proxy fails to start instead), and the hash size is not touched.
 */
public final class ConntrackSysctls {
    public static final String MAX = "nf_conntrack_max";
    public static final String HASHSIZE = "hashsize";
    /**
     * kube-proxy 1.36's ceiling on maxPerCore x CPUs (kubernetes PR 137002, pkg/proxy/conntrack getConntrackMax):
     * without it a 512-CPU node asked the kernel for 16 M entries. As there, it caps the product before the floor
     * is compared, so a product above it gives exactly this value even when {@code min} is larger; a {@code min}
     * above it still applies when the product is below {@code min}.
     */
    public static final long SCALED_MAX_CAP = 1_048_576;

    /** One sysctl and the value wanted. */
    public record Setting(String name, long value) {}

    public enum Status { UNCHANGED, SET, NOT_SETTABLE_HERE, HASHSIZE_NOT_SET }

    /** What happened to one setting: the kernel's value before, and what was done ({@code why}: the error, if any). */
    public record Outcome(Setting setting, long before, Status status, String why) {
        @Override public String toString() {
            return switch (status) {
                case UNCHANGED -> setting.name + "=" + before + " (already)";
                case SET -> setting.name + "=" + setting.value + " (was " + before + ")";
                case NOT_SETTABLE_HERE -> setting.name + " left at " + before + ", not " + setting.value
                        + ": only the host's initial network namespace can set it";
                case HASHSIZE_NOT_SET -> "conntrack hash size left at " + (before < 0 ? "what it is" : before) + ", not " + setting.value + " (" + why
                        + "): lookups are slower when the table is full; run 'nftproxy run --init-only' as root to set it";
            };
        }
    }

    /** Where the sysctls are read and written: the kernel's files, or a test's. */
    public interface Access {
        /** {@code /proc/sys/net/netfilter/NAME}, or the conntrack module's hashsize parameter for {@link #HASHSIZE}. */
        long read(String name) throws IOException;

        void write(String name, long value) throws IOException;

        /** False when the kernel offers the file read-only here (a host-wide sysctl seen from another namespace). */
        boolean writable(String name) throws IOException;
    }

    /**
     * The kernel's files as seen from {@code netns}, every access on a thread in it; failures by
     * {@link NetworkNamespace#call}'s rule (a file that is not a number: an IOException with the parse error).
     */
    public static Access kernel(NetworkNamespace netns) {
        return new Access() {
            @Override public long read(String name) throws IOException {
                return netns.call(() -> Long.parseLong(readProcFile(path(name))));
            }

            @Override public void write(String name, long value) throws IOException {
                netns.call(() -> Files.writeString(path(name), Long.toString(value)));
            }

            @Override public boolean writable(String name) throws IOException {
                return netns.call(
                        () -> Files.getPosixFilePermissions(path(name)).contains(PosixFilePermission.OWNER_WRITE));
            }

            private Path path(String name) {
                return name.equals(HASHSIZE) ? Path.of("/sys/module/nf_conntrack/parameters/hashsize")
                        : Path.of("/proc/sys/net/netfilter", name);
            }
        };
    }

    private ConntrackSysctls() {}

    /** nf_conntrack_max for these settings on a node with {@code cpus} CPUs; 0 when it is to be left alone. */
    public static long max(ConntrackSettings c, int cpus) {
        if (c.maxPerCore() <= 0) return 0;
        long scaled = (long) c.maxPerCore() * cpus;
        if (scaled > SCALED_MAX_CAP) return SCALED_MAX_CAP;
        return Math.max(scaled, c.min());
    }

    /** The sysctls to set, in kube-proxy's order, without the hash size (which follows nf_conntrack_max). */
    public static List<Setting> plan(ConntrackSettings c, int cpus) {
        List<Setting> out = new ArrayList<>();
        long max = max(c, cpus);
        if (max > 0) out.add(new Setting(MAX, max));
        if (c.tcpEstablishedTimeout().toSeconds() > 0) out.add(new Setting("nf_conntrack_tcp_timeout_established", c.tcpEstablishedTimeout().toSeconds()));
        if (c.tcpCloseWaitTimeout().toSeconds() > 0) out.add(new Setting("nf_conntrack_tcp_timeout_close_wait", c.tcpCloseWaitTimeout().toSeconds()));
        if (c.tcpBeLiberal()) out.add(new Setting("nf_conntrack_tcp_be_liberal", 1));
        if (c.udpTimeout().toSeconds() > 0) out.add(new Setting("nf_conntrack_udp_timeout", c.udpTimeout().toSeconds()));
        if (c.udpStreamTimeout().toSeconds() > 0) out.add(new Setting("nf_conntrack_udp_timeout_stream", c.udpStreamTimeout().toSeconds()));
        return out;
    }

    /**
     * Sets {@code plan} through {@code access}.
     *
     * @throws IOException a sysctl could not be read, or could not be written although the kernel offers it here
     *                     (no privilege, a read-only /proc/sys): the caller fails its start, as kube-proxy does
     */
    public static List<Outcome> apply(List<Setting> plan, Access access) throws IOException {
        List<Outcome> out = new ArrayList<>();
        for (Setting s : plan) {
            Outcome o = set(s, access);
            out.add(o);
            if (s.name.equals(MAX) && o.status != Status.NOT_SETTABLE_HERE) {
                // Only where nf_conntrack_max can be set: the kernel refuses a hash size from any other namespace.
                long buckets = s.value / 4;
                long now;
                try {
                    now = access.read(HASHSIZE);
                } catch (IOException e) {
                    // Root-only (0600), and a container's /sys may not show it: as a failed write, a warning.
                    out.add(new Outcome(new Setting(HASHSIZE, buckets), -1, Status.HASHSIZE_NOT_SET,
                            "cannot read " + e.getMessage()));
                    continue;
                }
                if (now < buckets) out.add(growHashTable(new Setting(HASHSIZE, buckets), now, access));
            }
        }
        return out;
    }

    /**
     * The hash size is a root-only module parameter: a daemon with CAP_NET_ADMIN alone cannot raise it. A smaller
     * table only makes lookups in a full one slower, so that is a warning, not a failed start (kube-proxy, too,
     * only warns when /sys is read-only).
     */
    private static Outcome growHashTable(Setting s, long now, Access access) {
        try {
            return set(s, access);
        } catch (IOException e) {
            return new Outcome(s, now, Status.HASHSIZE_NOT_SET, e.getMessage());
        }
    }

    private static Outcome set(Setting s, Access access) throws IOException {
        long before = access.read(s.name);
        if (before == s.value) return new Outcome(s, before, Status.UNCHANGED, null);
        if (!access.writable(s.name)) return new Outcome(s, before, Status.NOT_SETTABLE_HERE, null);
        try {
            access.write(s.name, s.value);
        } catch (AccessDeniedException e) {
            throw new AccessDeniedException(e.getFile(), null, "permission denied setting " + s.name + " to " + s.value
                    + " (run 'nftproxy run --init-only' with full privileges first)");
        } catch (IOException e) {
            throw new IOException("cannot set " + s.name + " to " + s.value + ": " + e.getMessage(), e);
        }
        return new Outcome(s, before, Status.SET, null);
    }

    /** The CPUs the node has, as kube-proxy counts them (the online CPUs of the machine, not this process's cgroup or affinity share). */
    public static int cpus() {
        try {
            return countCpus(readProcFile(Path.of("/sys/devices/system/cpu/online")));
        } catch (IOException | RuntimeException e) {
            return Runtime.getRuntime().availableProcessors();
        }
    }

    /**
     * A proc or sysfs file's text, stripped. Not {@code Files.readString}: for a file that reports size 0 it reads a
     * single byte here, and a sysctl of 262144 read back as "2".
     */
    public static String readProcFile(Path p) throws IOException {
        try (java.io.InputStream in = Files.newInputStream(p)) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII).strip();
        }
    }

    /** Counts a kernel CPU list such as {@code 0-3,8,10-11}. */
    static int countCpus(String list) {
        int n = 0;
        for (String part : list.split(",")) {
            int dash = part.indexOf('-');
            n += dash < 0 ? 1 : Integer.parseInt(part.substring(dash + 1)) - Integer.parseInt(part.substring(0, dash)) + 1;
        }
        return n;
    }
}
